package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/gpuprof/gpuprof/ingest"
	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/spool"
	"github.com/gpuprof/gpuprof/store"
)

type jobsOptions struct {
	JSON   bool
	User   string
	Status string
	Since  string
	Limit  int
}

func (o *jobsOptions) AddFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.JSON, "json", false, "print profiles as JSON (an array of profile objects, see docs/json.md)")
	fs.StringVar(&o.User, "user", "", "only jobs of this user")
	fs.StringVar(&o.Status, "status", "", "only jobs with this status: running or finished")
	fs.StringVar(&o.Since, "since", "", "only jobs started at or after this time (RFC 3339 or YYYY-MM-DD)")
	fs.IntVar(&o.Limit, "limit", 0, "at most this many jobs (0: all)")
}

func newJobsCommand(g *globalOptions) *cobra.Command {
	o := &jobsOptions{}
	cmd := &cobra.Command{
		Use:   "jobs",
		Short: "List job profiles, newest first",
		Long: `Lists the job profiles in the database, newest first. A user who is not root
sees only their own jobs.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f := store.Filter{User: o.User, Status: o.Status, Limit: o.Limit, WithSeries: o.JSON}
			if o.Since != "" {
				t, err := parseTime(o.Since)
				if err != nil {
					return usagef("--since: %v", err)
				}
				f.Since = t
			}
			jobs, err := queryJobs(cmd.Context(), g, f)
			if err != nil {
				return err
			}
			if o.JSON {
				return writeJSON(cmd.OutOrStdout(), jobs)
			}
			return writeJobTable(cmd.OutOrStdout(), jobs)
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}

func newShowCommand(g *globalOptions) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show JOBID",
		Short: "Show a job's profile on every node it ran on",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			jobs, err := queryJobs(cmd.Context(), g, store.Filter{JobID: args[0], WithSeries: true})
			if err != nil {
				return err
			}
			if len(jobs) == 0 {
				return fmt.Errorf("job %s: %w", args[0], store.ErrNotFound)
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), jobs)
			}
			for _, j := range jobs {
				writeJobDetail(cmd.OutOrStdout(), j)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array of per-node profiles")
	return cmd
}

func newIngestCommand(g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "ingest",
		Short: "Write spooled records (kept while the database was busy) into the database",
		Long: `The agent does this on its own; run it when the agent is stopped and the spool
directory holds records.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := g.load()
			if err != nil {
				return err
			}
			db, err := store.Open(cmd.Context(), cfg.DB, store.Options{BusyTimeout: 5 * time.Second})
			if err != nil {
				return err
			}
			defer db.Close()
			log, closeLog := newLogger(cfg.LogFile, os.Stderr, g.level(), "component", "ingest")
			defer closeLog()
			n, err := ingest.DrainSpool(cmd.Context(), db, spool.Dir{Path: cfg.SpoolDir}, ingest.Options{Outbox: cfg.Collector != ""}, log)
			printf(cmd.OutOrStdout(), "%d records ingested\n", n)
			return err
		},
	}
}

// queryJobs reads profiles; a caller who is not root sees only their own.
func queryJobs(ctx context.Context, g *globalOptions, f store.Filter) ([]profile.Job, error) {
	cfg, err := g.load()
	if err != nil {
		return nil, err
	}
	if uid := os.Getuid(); uid != 0 {
		f.UID = &uid
	}
	db, err := store.Open(ctx, cfg.DB, store.Options{ReadOnly: true, BusyTimeout: 2 * time.Second})
	if err != nil {
		return nil, err
	}
	defer db.Close()
	return db.ListJobs(ctx, f)
}

func parseTime(s string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339, "2006-01-02T15:04:05", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("bad time %q", s)
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// clean makes user-controlled text safe for a terminal: no control
// characters or escape sequences reach it.
func clean(s string, maxLen int) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return '?'
		}
		return r
	}, s)
	if r := []rune(s); len(r) > maxLen {
		s = string(r[:maxLen-1]) + "…"
	}
	return s
}

func gib(b uint64) string { return fmt.Sprintf("%.1f", float64(b)/(1<<30)) }

func writeJobTable(w io.Writer, jobs []profile.Job) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	printf(tw, "JOBID\tNODE\tUSER\tSTATUS\tSTART\tELAPSED\tGPUS\tVRAM PEAK GiB\tUTIL MEAN\tFLAGS\n")
	for _, j := range jobs {
		var peaks, utils []string
		var flags []string
		for _, g := range j.GPUs {
			if g.MemSamples > 0 {
				peaks = append(peaks, gib(g.MemPeak))
			} else {
				peaks = append(peaks, "-")
			}
			if m, ok := g.UtilMean(); ok {
				utils = append(utils, fmt.Sprintf("%.0f%%", m))
			} else {
				utils = append(utils, "-")
			}
			if g.IdleAllocation {
				flags = appendOnce(flags, "idle-gpu")
			}
			if g.Preallocated {
				flags = appendOnce(flags, "prealloc")
			}
			if g.Shared {
				flags = appendOnce(flags, "shared")
			}
			if g.XIDCount > 0 {
				flags = appendOnce(flags, "xid")
			}
		}
		if j.Partial {
			flags = append(flags, "partial")
		}
		status := j.Status
		if j.ExitKnown && (j.ExitStatus != 0 || j.ExitSignal != 0) {
			status = fmt.Sprintf("%s(%d:%d)", status, j.ExitStatus, j.ExitSignal)
		}
		printf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n",
			clean(j.JobID, 20), clean(j.Node, 20), clean(j.User, 16), status,
			j.Start.Local().Format("2006-01-02 15:04"), elapsed(j), len(j.GPUs),
			orDash(strings.Join(peaks, ",")), orDash(strings.Join(utils, ",")), orDash(strings.Join(flags, ",")))
	}
	return tw.Flush()
}

func appendOnce(s []string, v string) []string {
	for _, x := range s {
		if x == v {
			return s
		}
	}
	return append(s, v)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func elapsed(j profile.Job) string {
	end := j.End
	if end.IsZero() {
		end = j.LastSample
	}
	if end.IsZero() || end.Before(j.Start) {
		return "-"
	}
	return end.Sub(j.Start).Round(time.Second).String()
}

func writeJobDetail(w io.Writer, j profile.Job) {
	printf(w, "Job %s on %s (cluster %s)\n", clean(j.JobID, 64), clean(j.Node, 64), clean(j.Cluster, 64))
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
