package main

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
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

// dur writes a duration as Slurm does: [D-]HH:MM:SS.
func dur(d time.Duration) string { return slurmext.FormatDuration(d.Round(time.Second), false) }

// writeViewTable prints one line per job, padded by display width so
// that wide names keep the columns straight: durations as Slurm writes
// them ([D-]HH:MM:SS), GPUS as requested/used, and one value per job for
// memory and utilisation, the largest over its GPUs with "×N" for N GPUs.
// Names are cut to 10 cells, users to 7 and accounts to 8, so that a line
// with 4-GPU jobs fits 120 columns.
func writeViewTable(w io.Writer, views []store.JobView) error {
	t := newTable("JOBID", "NAME", "USER", "ACCOUNT", "PARTITION", "STATE", "START", "WAIT", "ELAPSED", "GPUS", "MEM GiB", "UTIL", "NOTES")
	for _, c := range []int{7, 8, 9, 10, 11} {
		t.right[c] = true
	}
	for _, v := range views {
		var name, user, account, partition, state, start, wait, ran = "-", "-", "-", "-", "-", "-", "-", "-"
		if s := v.Sched; s != nil {
			name = orDash(fitWidth(clean(s.Name, 64), 10))
			user, account, partition, state = fitWidth(clean(s.User, 16), 7), orDash(fitWidth(clean(s.Account, 16), 8)), orDash(fitWidth(clean(s.Partition, 16), 10)), s.State
			if !s.Start.IsZero() {
				start = s.Start.Local().Format(jobsStart)
			}
			if d, ok := s.Wait(); ok {
				wait = slurmext.FormatDuration(d, false)
			}
			if d, ok := s.Elapsed(); ok {
				ran = slurmext.FormatDuration(d, false)
			}
		}
		if len(v.Profiles) > 0 {
			p := v.Profiles[0]
			if v.Sched == nil {
				user, account, partition, state = fitWidth(clean(p.User, 16), 7), orDash(fitWidth(clean(p.Account, 16), 8)), orDash(fitWidth(clean(p.Partition, 16), 10)), p.Status
				start = p.Start.Local().Format(jobsStart)
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
		var notes []string
		var peak uint64
		var util float64
		gpus, peaks, utils := 0, 0, 0
		for _, p := range v.Profiles {
			for _, g := range p.GPUs {
				gpus++
				if g.MemSamples > 0 {
					peak = max(peak, g.MemPeak)
					peaks++
				}
				if m, ok := g.UtilMean(); ok {
					util = max(util, m)
					utils++
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
		slices.Sort(notes)
		for _, m := range missing(v) {
			notes = append(notes, "no "+strings.ReplaceAll(m, "_", "-"))
		}
		vram, ut := "-", "-"
		if peaks > 0 {
			vram = gib(peak) + times(peaks)
		}
		if utils > 0 {
			ut = fmt.Sprintf("%.0f%%", util) + times(utils)
		}
		t.row(clean(v.SlurmID(), 24), name, user, account, partition, clean(state, 24), start, wait, ran, req+"/"+used,
			vram, ut, orDash(strings.Join(notes, ",")))
	}
	return t.write(w)
}

// jobsStart is the START column's layout: month, day and time (the year
// is in `show`), so that a line fits 120 columns.
const jobsStart = "01-02 15:04"

// times is "×n" for a value that is the largest of n GPUs' (n > 1).
func times(n int) string {
	if n > 1 {
		return "×" + strconv.Itoa(n)
	}
	return ""
}
