package cliview

// jobs.go prints the table of gpuprof jobs, whose columns --format
// chooses as sacct's --format does.

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/internal/present"
	"github.com/gpuprof/gpuprof/internal/texttable"
	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/store"
	"github.com/gpuprof/gpuprof/termtext"
)

// jobsColumn is one column `gpuprof jobs --format` can name: its key (as
// sacct's field names, matched case-insensitively), header, alignment,
// what it shows (for --format=help) and how a job's cell is written.
// Without a %N width a cell is cut to cut cells (0: never), marked "…".
type jobsColumn struct {
	key, header, help string
	right             bool
	cut               int
	cell              func(r *jobsRow) string
}

// jobsRow is what the columns of one job are written from, computed once
// per job.
type jobsRow struct {
	v                                         store.JobView
	name, user, account, partition, state     string
	start, startShort, wait, ran, gpus, notes string
	mem, util                                 string
	sm, tensor, dram                          string
}

// jobsColumns are the columns --format may name, in the order
// --format=help lists them.
var jobsColumns = []jobsColumn{
	{key: "jobid", header: "JOBID", help: "Slurm's job id (53_1 for an array task, 60+1 for a heterogeneous component)", cell: func(r *jobsRow) string { return termtext.Short(r.v.SlurmID(), 24) }},
	{key: "name", header: "NAME", help: "the job's name, cut to 10 cells (name%40 for more)", cut: 10, cell: func(r *jobsRow) string { return present.OrMissing(r.name) }},
	{key: "jobname", header: "NAME", help: "the same as name (sacct's JobName)", cut: 10, cell: func(r *jobsRow) string { return present.OrMissing(r.name) }},
	{key: "user", header: "USER", help: "the job's user, cut to 7 cells (user%16 for more)", cut: 7, cell: func(r *jobsRow) string { return present.OrMissing(r.user) }},
	{key: "account", header: "ACCOUNT", help: "the job's account, cut to 8 cells (account%16 for more)", cut: 8, cell: func(r *jobsRow) string { return present.OrMissing(r.account) }},
	{key: "partition", header: "PARTITION", help: "the job's partition, cut to 10 cells", cut: 10, cell: func(r *jobsRow) string { return present.OrMissing(r.partition) }},
	{key: "state", header: "STATE", help: "the job's state as sacct writes it, or a profile's status (running, finished)", cell: func(r *jobsRow) string { return present.OrMissing(r.state) }},
	{key: "startshort", header: "START", help: "start time, local, month to minute (MM-DDTHH:MM)", cell: func(r *jobsRow) string { return r.startShort }},
	{key: "start", header: "START", help: "start time, local, as sacct writes it (YYYY-MM-DDTHH:MM:SS)", cell: func(r *jobsRow) string { return r.start }},
	{key: "wait", header: "WAIT", right: true, help: "time from eligible to start ([D-]HH:MM:SS)", cell: func(r *jobsRow) string { return r.wait }},
	{key: "elapsed", header: "ELAPSED", right: true, help: "run time ([D-]HH:MM:SS)", cell: func(r *jobsRow) string { return r.ran }},
	{key: "gpus", header: "GPUS", right: true, help: "GPUs held/used: the GPUs requested (a shard job's GPU counts one) and those used (not idle); - unknown (no utilisation reading)", cell: func(r *jobsRow) string { return r.gpus }},
	{key: "mem", header: "MEM GiB", right: true, help: "GPU memory peak in GiB, the largest over the job's GPUs, ×N for N GPUs", cell: func(r *jobsRow) string { return r.mem }},
	{key: "util", header: "UTIL", right: true, help: "mean GPU utilisation over the job's GPUs, as show, the TUI and the report give it", cell: func(r *jobsRow) string { return r.util }},
	{key: "sm", header: "SM", right: true, help: "mean SM activity (GPM, Hopper and later), the mean over the job's GPUs with a reading, as UTIL; * the whole GPU's while shared with other jobs; - unknown (no GPM reading)", cell: func(r *jobsRow) string { return r.sm }},
	{key: "tensor", header: "TENSOR", right: true, help: "mean tensor-core activity (GPM), as sm", cell: func(r *jobsRow) string { return r.tensor }},
	{key: "dram", header: "DRAM", right: true, help: "mean DRAM bandwidth used, percent of the peak (GPM), as sm", cell: func(r *jobsRow) string { return r.dram }},
	{key: "notes", header: "NOTES", help: "idle-gpu, prealloc, shared, xid, partial, and which part of the record is missing", cell: func(r *jobsRow) string { return r.notes }},
}

// DefaultJobsFormat is the jobs table without --format. Its START is
// "startshort" (MM-DDTHH:MM, the tail of sacct's form without year and
// seconds) rather than sacct's full YYYY-MM-DDTHH:MM:SS: the eight cells
// saved keep a line with 4-GPU jobs within 120 columns
// (TestJobsTableWidth), and the year and seconds are in `show` and in the
// "start" column that --format=...,start adds.
const DefaultJobsFormat = "jobid,name,user,account,partition,state,startshort,wait,elapsed,gpus,mem,util,notes"

// JobsField is a column --format chose, with sacct's %N width: the cell
// padded or cut (the last cell kept replaced by "+", as sacct marks a
// cut) to width cells; width 0 means sized to the content. A positive N
// right-aligns and a negative one left-aligns, as in sacct; without %N
// the column keeps its own alignment.
type JobsField struct {
	col   jobsColumn
	width int
	right bool
}

// ParseJobsFormat reads a --format value of gpuprof jobs: column names
// separated by commas, case-insensitive, each with an optional %N or %-N
// width; "" is DefaultJobsFormat. An unknown name or a malformed width is
// an error naming the known columns (the command's usage error).
func ParseJobsFormat(s string) ([]JobsField, error) {
	if strings.TrimSpace(s) == "" {
		s = DefaultJobsFormat
	}
	var fields []JobsField
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, width, hasWidth := strings.Cut(item, "%")
		i := slices.IndexFunc(jobsColumns, func(c jobsColumn) bool { return strings.EqualFold(c.key, name) })
		if i < 0 {
			return nil, fmt.Errorf("--format: unknown column %q; known: %s (--format=help describes them)", termtext.Short(name, 40), strings.Join(jobsColumnKeys(), ", "))
		}
		f := JobsField{col: jobsColumns[i], right: jobsColumns[i].right}
		if hasWidth {
			n, err := strconv.Atoi(width)
			if err != nil || n == 0 {
				return nil, fmt.Errorf("--format: %q: want a width such as %s%%20 (right-aligned) or %s%%-20 (left-aligned), as sacct takes it", termtext.Short(item, 40), name, name)
			}
			f.width, f.right = max(n, -n), n > 0
		}
		fields = append(fields, f)
	}
	if len(fields) == 0 {
		return nil, errors.New("--format: no column named; known: " + strings.Join(jobsColumnKeys(), ", "))
	}
	return fields, nil
}

func jobsColumnKeys() []string {
	keys := make([]string, len(jobsColumns))
	for i, c := range jobsColumns {
		keys[i] = c.key
	}
	return keys
}

// JobsFormatHelp lists the columns gpuprof jobs --format takes, as sacct
// --helpformat does, with what each shows.
func JobsFormatHelp(w io.Writer) error {
	t := texttable.New("COLUMN", "HEADER", "SHOWS")
	for _, c := range jobsColumns {
		t.Row(c.key, c.header, c.help)
	}
	if err := t.Write(w); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\nDefault: --format=%s\nA width as sacct takes it: name%%30 (right-aligned, cut with \"+\"), name%%-30 (left-aligned).\n", DefaultJobsFormat)
	return err
}

// sacctCut fits s to exactly n cells as sacct's %N does: a longer value
// keeps its first n-1 cells and a "+" marking the cut, a shorter one is
// padded on the side alignment leaves.
func sacctCut(s string, n int, right bool) string {
	if ansi.StringWidth(s) > n {
		s = ansi.Truncate(s, n, "+")
	}
	pad := strings.Repeat(" ", n-ansi.StringWidth(s))
	if right {
		return pad + s
	}
	return s + pad
}

// JobsTable prints gpuprof jobs' table, one line per job with the
// columns fields names, padded by display width so that wide names keep
// the columns straight: durations as Slurm writes them ([D-]HH:MM:SS),
// GPUS as held/used and UTIL as the mean over the job's GPUs
// (analysis.Shown under c, as show, the TUI and the report), and memory
// as the largest peak over its GPUs with "×N" for N GPUs. In the default
// format names are cut to 10 cells, users to 7 and accounts to 8, so
// that a line with 4-GPU jobs fits 120 columns.
//
// now is the read time: a running job's ELAPSED counts to it
// (store.JobView.ElapsedAt).
func JobsTable(w io.Writer, views []store.JobView, fields []JobsField, c analysis.Config, now time.Time) error {
	header := make([]string, len(fields))
	for i, f := range fields {
		header[i] = f.col.header
		if f.width > 0 {
			header[i] = sacctCut(f.col.header, f.width, f.right)
			if i == len(fields)-1 {
				header[i] = strings.TrimRight(header[i], " ")
			}
		}
	}
	t := texttable.New(header...)
	t.Gap = " " // as sacct separates its columns, so that 4-GPU jobs fit 120
	for i, f := range fields {
		t.Right[i] = f.right
	}
	for _, v := range views {
		r := newJobsRow(v, c, now)
		cells := make([]string, len(fields))
		for i, f := range fields {
			switch c := f.col.cell(&r); {
			case f.width > 0 && i == len(fields)-1 && !f.right:
				cells[i] = strings.TrimRight(sacctCut(c, f.width, false), " ") // no trailing blanks
			case f.width > 0:
				cells[i] = sacctCut(c, f.width, f.right)
			case f.col.cut > 0:
				cells[i] = texttable.FitWidth(c, f.col.cut)
			default:
				cells[i] = c
			}
		}
		t.Row(cells...)
	}
	return t.Write(w)
}

// newJobsRow works out the cells of one job: the scheduler's record
// where there is one, else while it runs what Slurm's prolog gave its
// nodes (store.JobView.SchedView: RUNNING, partition, GPUs, squeue's name), else
// its first GPU profile. GPUS and UTIL are analysis.Shown under c.
func newJobsRow(v store.JobView, c analysis.Config, now time.Time) jobsRow {
	r := jobsRow{v: v, start: "-", startShort: "-", wait: "-", ran: "-", state: "-"}
	if s := v.SchedView(); s != nil {
		r.name, r.user, r.account, r.partition, r.state = termtext.Short(s.Name, 64), termtext.Short(s.User, 16), termtext.Short(s.Account, 16), termtext.Short(s.Partition, 16), termtext.Short(string(s.State), 24)
		if !s.Start.IsZero() {
			r.start, r.startShort = slurmext.FormatTime(s.Start, nil), s.Start.Local().Format(jobsStartShort)
		}
		if d, ok := s.Wait(); ok {
			r.wait = slurmext.FormatDuration(d, false)
		}
	} else if len(v.Profiles) > 0 {
		p := v.Profiles[0]
		r.user, r.account, r.partition, r.state = termtext.Short(p.User, 16), termtext.Short(p.Account, 16), termtext.Short(p.Partition, 16), termtext.Short(p.Status, 24)
		r.start, r.startShort = slurmext.FormatTime(p.Start, nil), p.Start.Local().Format(jobsStartShort)
	}
	if d, ok := v.ElapsedAt(now); ok {
		// A running job's, to now: squeue's TIME, not the last flush.
		r.ran = slurmext.FormatDuration(d, false)
	}
	shown := shownOf(v, c)
	r.gpus = present.GPUs(shown.GPUs, shown.Used, shown.UsedKnown)
	var notes []string
	var peak uint64
	peaks := 0
	for _, p := range v.Profiles {
		for _, g := range p.GPUs {
			if g.MemSamples > 0 {
				peak = max(peak, g.MemPeak)
				peaks++
			}
			for cond, note := range map[bool]string{g.IdleAllocation: "idle-gpu", g.Preallocated: "prealloc", g.Shared: "shared", g.XIDCount > 0: "xid"} {
				if cond && !slices.Contains(notes, note) {
					notes = append(notes, note)
				}
			}
		}
		if p.Partial && !slices.Contains(notes, "partial") {
			notes = append(notes, "partial")
		}
	}
	slices.Sort(notes)
	for _, m := range missingParts(v) {
		notes = append(notes, "no "+strings.ReplaceAll(m, "_", "-"))
	}
	r.notes = present.OrMissing(strings.Join(notes, ","))
	r.mem, r.util = "-", "-"
	if peaks > 0 {
		r.mem = present.GiB(peak) + timesN(peaks)
	}
	if shown.UtilKnown {
		r.util = present.Util(shown.Util) + " %" // "48 %"
	}
	r.sm = activityCell(v, func(a *profile.Activity) profile.ActivityStat { return a.SM })
	r.tensor = activityCell(v, func(a *profile.Activity) profile.ActivityStat { return a.Tensor })
	r.dram = activityCell(v, func(a *profile.Activity) profile.ActivityStat { return a.DRAM })
	return r
}

// activityCell is one GPM metric of a job as the jobs table writes it:
// the mean over its GPUs with a reading of each one's mean ("0.02 %"), as
// UTIL is the mean of the duty cycle (analysis.Shown); "*" when any of
// them is the whole GPU's while shared, "-" when no GPU has a reading.
func activityCell(v store.JobView, stat func(*profile.Activity) profile.ActivityStat) string {
	sum, n, shared := 0.0, 0, false
	for _, p := range v.Profiles {
		for _, g := range p.GPUs {
			if g.Activity == nil {
				continue
			}
			if m, ok := stat(g.Activity).Mean(); ok {
				sum += m
				n++
				shared = shared || g.Activity.Shared()
			}
		}
	}
	if n == 0 {
		return "-"
	}
	cell := present.Activity(sum/float64(n)) + " %"
	if shared {
		cell += "*"
	}
	return cell
}

// jobsStartShort is the layout of the default START column: sacct's
// instant without year and seconds (see DefaultJobsFormat).
const jobsStartShort = "01-02T15:04"

// timesN is "×n" for a value that is the largest of n GPUs' (n > 1).
func timesN(n int) string {
	if n > 1 {
		return "×" + strconv.Itoa(n)
	}
	return ""
}
