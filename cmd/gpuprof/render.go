package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/store"
)

// jobJSON is one element of `jobs --json` and `show --json` (docs/json.md).
// Derived values are null when their inputs are missing: never a zero that
// looks measured.
type jobJSON struct {
	Cluster string `json:"cluster"`
	JobID   string `json:"job_id"` // raw id (SLURM_JOB_ID)
	// DisplayID is the id as Slurm prints it ("53_1", "60+1"); the raw
	// id when no scheduler record names the job otherwise.
	DisplayID     string              `json:"display_id"`
	Sched         *slurmext.JobRecord `json:"sched"`
	Profiles      []profile.Job       `json:"profiles"`
	WaitSeconds   *float64            `json:"wait_seconds"`
	GPUsRequested *int                `json:"gpus_requested"`
	GPUsUsed      *int                `json:"gpus_used"`
	Missing       []string            `json:"missing"`
}

// What a job view can lack.
const (
	missingSched   = "scheduler_view" // no jobcomp record or sacct import
	missingProfile = "gpu_profile"    // no GPU readings (e.g. history from sacct, or a job with no GPU)
)

func toJobJSON(views []store.JobView) []jobJSON {
	out := make([]jobJSON, 0, len(views))
	for _, v := range views {
		j := jobJSON{Cluster: v.Cluster, JobID: v.JobID, DisplayID: v.SlurmID(), Sched: v.Sched, Profiles: v.Profiles, Missing: missing(v)}
		if j.Profiles == nil {
			j.Profiles = []profile.Job{}
		}
		if v.Sched != nil {
			if w, ok := v.Sched.Wait(); ok {
				s := w.Seconds()
				j.WaitSeconds = &s
			}
		}
		if n, ok := gpusRequested(v); ok {
			j.GPUsRequested = &n
		}
		if n, ok := gpusUsed(v); ok {
			j.GPUsUsed = &n
		}
		out = append(out, j)
	}
	return out
}

func missing(v store.JobView) []string {
	m := []string{}
	if v.Sched == nil {
		m = append(m, missingSched)
	}
	if len(v.Profiles) == 0 {
		m = append(m, missingProfile)
	}
	return m
}

// gpusRequested: the scheduler's request (sacct TRES) when known, else the
// GPUs the nodes saw allocated.
func gpusRequested(v store.JobView) (int, bool) {
	if v.Sched != nil && (v.Sched.ReqTRES != "" || v.Sched.AllocTRES != "") {
		return v.Sched.ReqGPUs, true
	}
	if len(v.Profiles) == 0 {
		return 0, false
	}
	n := 0
	for _, p := range v.Profiles {
		n += len(p.GPUs)
	}
	return n, true
}

// gpusUsed counts the GPUs on which a process of the job was seen.
func gpusUsed(v store.JobView) (int, bool) {
	n, sampled := 0, false
	for _, p := range v.Profiles {
		for _, g := range p.GPUs {
			if g.Samples > 0 || g.MemSamples > 0 || g.ProcSamples > 0 {
				sampled = true
			}
			if g.ProcSamples > 0 {
				n++
			}
		}
	}
	return n, sampled
}

func dur(d time.Duration) string {
	d = d.Round(time.Second)
	if d >= 24*time.Hour {
		return fmt.Sprintf("%dd%s", d/(24*time.Hour), (d % (24 * time.Hour)).String())
	}
	return d.String()
}

func writeViewTable(w io.Writer, views []store.JobView) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	printf(tw, "JOBID\tUSER\tACCOUNT\tPARTITION\tSTATE\tSTART\tWAIT\tELAPSED\tGPUS REQ/USED\tVRAM PEAK GiB\tUTIL\tNOTES\n")
	for _, v := range views {
		var user, account, partition, state, start, wait, ran = "-", "-", "-", "-", "-", "-", "-"
		if s := v.Sched; s != nil {
			user, account, partition, state = clean(s.User, 16), orDash(clean(s.Account, 16)), orDash(clean(s.Partition, 16)), s.State
			if !s.Start.IsZero() {
				start = s.Start.Local().Format("2006-01-02 15:04")
			}
			if d, ok := s.Wait(); ok {
				wait = dur(d)
			}
			if d, ok := s.Elapsed(); ok {
				ran = dur(d)
			}
		}
		if len(v.Profiles) > 0 {
			p := v.Profiles[0]
			if v.Sched == nil {
				user, account, partition, state = clean(p.User, 16), orDash(clean(p.Account, 16)), orDash(clean(p.Partition, 16)), p.Status
				start = p.Start.Local().Format("2006-01-02 15:04")
				ran = elapsed(p)
			}
		}
		req, used := "-", "-"
		if n, ok := gpusRequested(v); ok {
			req = fmt.Sprint(n)
		}
		if n, ok := gpusUsed(v); ok {
			used = fmt.Sprint(n)
		}
		var peaks, utils, notes []string
		for _, p := range v.Profiles {
			for _, g := range p.GPUs {
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
				for cond, note := range map[bool]string{g.IdleAllocation: "idle-gpu", g.Preallocated: "prealloc", g.Shared: "shared", g.XIDCount > 0: "xid"} {
					if cond {
						notes = appendOnce(notes, note)
					}
				}
			}
			if p.Partial {
				notes = appendOnce(notes, "partial")
			}
		}
		for _, m := range missing(v) {
			notes = append(notes, "no "+strings.ReplaceAll(m, "_", "-"))
		}
		printf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s/%s\t%s\t%s\t%s\n",
			clean(v.SlurmID(), 24), user, account, partition, clean(state, 24), start, wait, ran, req, used,
			orDash(strings.Join(peaks, ",")), orDash(strings.Join(utils, ",")), orDash(strings.Join(notes, ",")))
	}
	return tw.Flush()
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
