package main

// jobs_table.go prints the table of gpuprof jobs.

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/store"
)

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
