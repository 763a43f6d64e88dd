package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/store"
)

type showOptions struct {
	JSON  bool
	Local bool
}

func (o *showOptions) AddFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.JSON, "json", false, "print a JSON array (one element per job the id names)")
	fs.BoolVar(&o.Local, "local", false, "read this host's jobs (the local database, or the agent's query socket) even when a collector is configured")
}

func newShowCommand(g *globalOptions) *cobra.Command {
	o := &showOptions{}
	cmd := &cobra.Command{
		Use:   "show JOBID",
		Short: "Show one job: scheduler view and its profile on every node it ran on",
		Long: `Shows a job by its id as Slurm prints it: an array task (53_1), a
heterogeneous job component (60+1), or a raw job id (58, SLURM_JOB_ID),
and prints both the Slurm id and the raw id. As with sacct -j, an array
job id (53) shows every task of the array and a heterogeneous job id every
component; the same id on several clusters shows each. Array and
heterogeneous ids are known from a jobcomp record or an sacct import; a job
known only from its GPU profile is found by its raw id.`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runShow(cmd.Context(), g, o, args[0], cmd.OutOrStdout())
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}

// maxShowNames bounds how many ids the line above several jobs lists.
const maxShowNames = 20

// runShow prints the jobs id names (see newShowCommand). An id that is no
// job id is a usage error; one that names no job the caller may see is
// "not found", the same answer whether the job is absent or someone
// else's.
func runShow(ctx context.Context, g *globalOptions, o *showOptions, id string, w io.Writer) error {
	ref, err := slurmext.ParseJobRef(id)
	if err != nil {
		return usagef("%w", err)
	}
	views, err := listViews(ctx, g, store.ViewFilter{Job: &ref, WithSeries: true}, o.Local)
	if err != nil {
		return err
	}
	if len(views) == 0 {
		return jobNotFound{ref}
	}
	sortBySlurmID(views)
	if o.JSON {
		return writeJSON(w, toJobJSON(views))
	}
	if len(views) > 1 {
		clusters := map[string]bool{}
		for _, v := range views {
			clusters[v.Cluster] = true
		}
		names := make([]string, 0, min(len(views), maxShowNames))
		for _, v := range views[:min(len(views), maxShowNames)] {
			name := clean(v.SlurmID(), 64)
			if len(clusters) > 1 {
				name += " (cluster " + clean(v.Cluster, 64) + ")"
			}
			names = append(names, name)
		}
		more := ""
		if len(views) > maxShowNames {
			more = fmt.Sprintf(" and %d more", len(views)-maxShowNames)
		}
		printf(w, "%s names %d jobs: %s%s\n", ref, len(views), strings.Join(names, ", "), more)
	}
	for i, v := range views {
		if i > 0 {
			printf(w, "\n")
		}
		writeViewDetail(w, v)
	}
	return nil
}

// jobNotFound is show's answer when an id names no job the caller may
// see; it wraps store.ErrNotFound.
type jobNotFound struct{ ref slurmext.JobRef }

func (e jobNotFound) Error() string {
	if e.ref.Plain() {
		return fmt.Sprintf("job %s: not found", e.ref)
	}
	return fmt.Sprintf("job %s: not found (array and heterogeneous job ids come from a jobcomp record or an sacct import; a job with a GPU profile alone is found by its raw id)", e.ref)
}

func (e jobNotFound) Unwrap() error { return store.ErrNotFound }

func elapsed(j profile.Job) string {
	end := j.End
	if end.IsZero() {
		end = j.LastSample
	}
	if end.IsZero() || end.Before(j.Start) {
		return "-"
	}
	return dur(end.Sub(j.Start))
}

func writeJobDetail(w io.Writer, j profile.Job) {
	// Under the job's heading, which names the job; the node knows only
	// the raw id.
	printf(w, "  Profile on node %s (raw id %s)\n", clean(j.Node, 64), clean(j.JobID, 64))
	printf(w, "  user %s (uid %d)  account %s  partition %s\n", clean(j.User, 32), j.UID, orDash(clean(j.Account, 32)), orDash(clean(j.Partition, 32)))
	printf(w, "  status %s  source %s  start %s  elapsed %s\n", j.Status, j.Source, j.Start.Local().Format(time.RFC3339), elapsed(j))
	if j.ExitKnown {
		printf(w, "  exit %d signal %d\n", j.ExitStatus, j.ExitSignal)
	}
	if j.Driver != "" {
		printf(w, "  driver %s  CUDA %s\n", j.Driver, j.CUDADriver)
	}
	if f, ok := j.IO.Fraction(); ok {
		printf(w, "  IO wait %.1f%% of the time (%s scope)\n", 100*f, j.IO.Scope)
	} else {
		printf(w, "  IO wait not measured\n")
	}
	for _, r := range j.PartialReasons {
		printf(w, "  partial: %s\n", clean(r, 200))
	}
	for _, g := range j.GPUs {
		printf(w, "  GPU %s (slurm index %d, minor %d) %s, %s GiB\n", g.UUID, g.SlurmIndex, g.Minor, clean(g.Model, 64), gib(g.MemoryTotal))
		if g.MemSamples > 0 {
			printf(w, "    VRAM peak %s GiB (%.0f%% of the card)\n", gib(g.MemPeak), 100*float64(g.MemPeak)/float64(max(g.MemoryTotal, 1)))
		} else {
			printf(w, "    VRAM peak not measured\n")
		}
		if m, ok := g.UtilMean(); ok {
			p50, _ := g.UtilPercentile(50)
			p95, _ := g.UtilPercentile(95)
			idle, _ := g.IdleFraction()
			printf(w, "    utilisation mean %.1f%%  p50 %d%%  p95 %d%%  max %d%%  idle %.0f%% of %d samples\n", m, p50, p95, g.UtilMax, 100*idle, g.Samples)
		} else {
			printf(w, "    utilisation not measured\n")
		}
		if g.EnergyValid {
			printf(w, "    energy %.1f Wh\n", g.EnergyJ/3600)
		}
		if g.TempValid {
			printf(w, "    max temperature %d °C\n", g.MaxTempC)
		}
		if g.XIDCount > 0 {
			printf(w, "    XID errors: %d\n", g.XIDCount)
		}
		if len(g.Processes) > 0 {
			names := make([]string, len(g.Processes))
			for i, p := range g.Processes {
				names[i] = clean(p, 32)
			}
			printf(w, "    processes: %s\n", strings.Join(names, ", "))
		}
		var flags []string
		if g.IdleAllocation {
			flags = append(flags, "idle allocation (no process ever used this GPU)")
		}
		if g.Preallocated {
			flags = append(flags, "memory preallocated by the framework (peak is not need)")
		}
		if g.Shared {
			flags = append(flags, "shared with other jobs (per-process readings)")
		}
		for _, f := range flags {
			printf(w, "    flag: %s\n", f)
		}
	}
}

// writeViewDetail prints one job. Its heading names it as Slurm does and,
// when that differs, by the raw id too: "Job 53_1 (raw id 58, cluster
// lab)", since the node hooks, cgroups and logs know only the raw id.
func writeViewDetail(w io.Writer, v store.JobView) {
	if id := v.SlurmID(); id != v.JobID {
		printf(w, "Job %s (raw id %s, cluster %s)\n", clean(id, 64), clean(v.JobID, 64), clean(v.Cluster, 64))
	} else {
		printf(w, "Job %s (cluster %s)\n", clean(v.JobID, 64), clean(v.Cluster, 64))
	}
	if s := v.Sched; s != nil {
		printf(w, "  scheduler (%s): %s  name %q  user %s  account %s  partition %s  qos %s\n", s.Source, s.State,
			clean(s.Name, 80), clean(s.User, 32), orDash(clean(s.Account, 32)), orDash(clean(s.Partition, 32)), orDash(clean(s.QOS, 32)))
		printf(w, "  submitted %s  started %s  ended %s\n", tstr(s.Submit), tstr(s.Start), tstr(s.End))
		if d, ok := s.Wait(); ok {
			printf(w, "  waited %s", dur(d))
		} else {
			printf(w, "  waited -")
		}
		if d, ok := s.Elapsed(); ok {
			printf(w, "  ran %s", dur(d))
		}
		switch {
		case s.Unlimited:
			printf(w, "  of an UNLIMITED time limit\n")
		case s.TimeLimit > 0:
			printf(w, "  of a %s time limit\n", dur(s.TimeLimit))
		default:
			printf(w, "\n")
		}
		printf(w, "  exit %d:%d  nodes %s", s.ExitStatus, s.ExitSignal, orDash(clean(s.NodeList, 200)))
		if s.ReqTRES != "" || s.AllocTRES != "" {
			printf(w, "  GPUs requested %d, shards %d\n", s.ReqGPUs, s.ReqShards)
		} else {
			printf(w, "  GPUs requested unknown (jobcomp reports no TRES; `gpuprof import sacct` adds it)\n")
		}
	} else {
		printf(w, "  no scheduler view (no jobcomp record and no sacct import for this job)\n")
	}
	if len(v.Profiles) == 0 {
		printf(w, "  no GPU profile: no GPU readings exist for this job\n")
	}
	for _, p := range v.Profiles {
		writeJobDetail(w, p)
	}
}

func tstr(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Local().Format(time.RFC3339)
}
