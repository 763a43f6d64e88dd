package sacct

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gpuprof/gpuprof/slurmext"
)

// build turns the values of one line into rec; isStep reports a step line,
// for which rec holds only its job's ids (JobID: the raw id before the '.',
// DisplayID: the JobID before the '.') and readings. It notes in r.misfit
// the first value of the wrong kind in a column whose kind is known (a
// state, a time, a limit, an exit code, a count, a node list, a TRES
// string): what a probe counts against the layout.
//
// It stays one function: it runs once per line and reads the columns in a
// fixed order, which is the order of the line's notes, with the misfit
// marks (r.shape) around the columns whose kind is known; each column is a
// line or two, and the parsing of each kind is already its own (n.text,
// r.time, r.tres, r.gpuUsage).
func (r *Reader) build(f []string, rec *slurmext.JobRecord) (isStep bool, err error) {
	cols := &r.layout.cols
	get := func(c sacctColumn) string {
		if i := cols[c]; i >= 0 {
			return f[i]
		}
		return ""
	}
	r.cur = r.cur[:0]
	n := &r.cur
	raw := strings.TrimSpace(get(colJobIDRaw))
	disp := strings.TrimSpace(get(colJobID))
	idText := disp
	if idText == "" {
		idText = raw
	}
	parts, err := slurmext.ParseJobID(idText)
	if err != nil {
		return false, err
	}
	if !plausibleJobID(parts.Base) {
		r.misfit = "job id"
	}
	r.lu = lineUsage{}
	if parts.IsStep() || strings.Contains(raw, ".") {
		*rec = slurmext.JobRecord{}
		if r.layout.hasUsage() {
			rec.JobID, _, _ = strings.Cut(raw, ".")
			rec.DisplayID = parts.Job
			r.stepID = idText
			r.gpuUsage(n, rec, get(colTRESUsageInMax), get(colTRESUsageInAve))
			r.hostUsage(n, get)
		}
		return true, nil
	}
	switch {
	case raw != "" && !slurmext.ValidJobID(raw):
		return false, fmt.Errorf("JobIDRaw %s is not a job id: %w", slurmext.QuoteShort(raw), slurmext.ErrBadJobID)
	case raw == "" && (parts.ArrayTaskID >= 0 || parts.HetOffset >= 0):
		// The raw id of an array task or het component is its own job id,
		// which only JobIDRaw gives.
		return false, fmt.Errorf("JobID %s needs the JobIDRaw column: %w", slurmext.QuoteShort(disp), ErrMalformed)
	case raw == "":
		raw = parts.Base
	}
	// Without a JobID column the display id is unknown: JobIDRaw alone
	// does not say whether a job is an array task or a het component.
	display := parts.Job
	if cols[colJobID] < 0 {
		display = ""
	}
	*rec = slurmext.JobRecord{
		JobID: raw, DisplayID: display, ArrayTaskID: parts.ArrayTaskID,
		ArrayTaskSpec: parts.ArrayTaskSpec, HetOffset: parts.HetOffset,
		UID: -1, CancelledBy: -1, Source: "sacct",
	}
	if parts.ArrayTaskID >= 0 || parts.ArrayTaskSpec != "" {
		rec.ArrayJobID = parts.Base
	}
	if parts.HetOffset >= 0 {
		rec.HetJobID = parts.Base
	}

	rec.Cluster = n.Text("Cluster", get(colCluster), slurmext.MaxFieldBytes)
	if rec.Cluster == "" {
		rec.Cluster = r.opts.Cluster
	}
	rec.Name = n.Text("JobName", get(colJobName), slurmext.MaxFieldBytes)
	rec.User = n.Text("User", get(colUser), slurmext.MaxFieldBytes)
	mark := len(*n)
	rec.UID = n.ID("UID", get(colUID))
	r.shape(mark)
	rec.Account = n.Text("Account", get(colAccount), slurmext.MaxFieldBytes)
	rec.Partition = n.Text("Partition", get(colPartition), slurmext.MaxFieldBytes)
	rec.QOS = n.Text("QOS", get(colQOS), slurmext.MaxFieldBytes)
	rec.Reason = n.Text("Reason", get(colReason), slurmext.MaxFieldBytes)
	mark = len(*n)
	rec.Submit = r.time(n, "Submit", get(colSubmit))
	rec.Eligible = r.time(n, "Eligible", get(colEligible))
	rec.Start = r.time(n, "Start", get(colStart))
	rec.End = r.time(n, "End", get(colEnd))
	if err := slurmext.CheckTimeOrder(rec); err != nil {
		return false, err
	}
	if slurmext.EligibleBeforeSubmit(rec) {
		n.Add("Eligible", "%s is before Submit %s by more than %s: left unknown",
			rec.Eligible.UTC().Format(time.RFC3339), rec.Submit.UTC().Format(time.RFC3339), slurmext.TimeOrderSkew)
		rec.Eligible = time.Time{}
	}
	if v := get(colState); v != "" {
		st, by, err := slurmext.ParseState(v)
		if err != nil {
			n.Add("State", "%v", err)
		}
		rec.State, rec.CancelledBy = st, by
	}
	d, unlimited, err := slurmext.ParseDuration(get(colTimelimit))
	if err != nil {
		n.Add("Timelimit", "%v", err)
	}
	rec.TimeLimit, rec.Unlimited = d, unlimited
	if cols[colElapsed] >= 0 && r.probing {
		// Not kept (End-Start is), but a layout check: a duration goes
		// here. Only while probing: it costs an allocation per line.
		if _, _, err := slurmext.ParseDuration(get(colElapsed)); err != nil {
			n.Add("Elapsed", "%v", err)
		}
	}
	exit := get(colExitCode)
	rec.ExitStatus, rec.ExitSignal = n.ExitCode("ExitCode", exit)
	if _, _, err := slurmext.ParseExitCode2(exit); err != nil || exit == "" {
		rec.ExitUnknown = true // not reported, or malformed: not 0:0
	}
	rec.DerivedStatus, rec.DerivedSignal = n.ExitCode("DerivedExitCode", get(colDerivedExitCode))
	rec.NodeCount = n.Count("NNodes", get(colNNodes))
	rec.CPUs = n.Count("NCPUS", get(colNCPUS))
	r.shape(mark)
	if nl := get(colNodeList); nl != "None assigned" {
		rec.NodeList = n.Text("NodeList", nl, slurmext.MaxFieldBytes)
		if rec.NodeList != "" {
			if err := slurmext.CheckHostlist(rec.NodeList); err != nil {
				mark = len(*n)
				n.Add("NodeList", "%v", err)
				r.shape(mark)
			}
		}
	}
	rec.ReqTRES = r.tres(n, "ReqTRES", get(colReqTRES))
	rec.AllocTRES = r.tres(n, "AllocTRES", get(colAllocTRES))
	rec.ReqGPUs, rec.ReqGPUType, rec.ReqShards, rec.GPUsFrom = slurmext.RequestedGPUs(rec.ReqTRES, rec.AllocTRES)
	r.gpuUsage(n, rec, get(colTRESUsageInMax), get(colTRESUsageInAve))
	r.hostUsage(n, get)
	r.reqMem(n, rec, get(colReqMem))
	return false, nil
}

// plausibleJobID is the probe's view of a job id: a number, or shaped like a
// SLUID ('s' and 13 more letters or digits). slurmext.ParseJobID accepts any id of
// the characters Slurm uses; a probe wants a word like "gpu" in the job id
// column to count against the layout.
func plausibleJobID(base string) bool {
	if _, ok := slurmext.ParseDigits(base, 1<<32); ok {
		return true
	}
	return len(base) == 14 && (base[0] == 's' || base[0] == 'S')
}

// shape records as the line's misfit the first note added since mark.
func (r *Reader) shape(mark int) {
	if r.misfit == "" && len(r.cur) > mark {
		r.misfit = slurmext.QuoteShort(r.cur[mark])
	}
}

// gpuUsage reads Slurm's GPU readings from the usage columns into rec; a
// malformed usage string or reading is noted (under the column's name, which
// fold and hold look for) and leaves the reading unknown.
func (r *Reader) gpuUsage(n *slurmext.Notes, rec *slurmext.JobRecord, maxText, aveText string) {
	if maxText != "" {
		mark := len(*n)
		if err := slurmext.CheckTRES(maxText); err != nil {
			n.Add("TRESUsageInMax", "%v", err)
		} else if b, found, err := slurmext.GPUMemFromUsage(maxText); err != nil {
			n.Add("TRESUsageInMax", "%v", err)
		} else if found {
			rec.SlurmGPUMem, rec.SlurmGPUMemValid = b, true
		}
		r.shape(mark)
	}
	if aveText != "" {
		mark := len(*n)
		if err := slurmext.CheckTRES(aveText); err != nil {
			n.Add("TRESUsageInAve", "%v", err)
		} else if u, found, err := slurmext.GPUUtilFromUsage(aveText); err != nil {
			n.Add("TRESUsageInAve", "%v", err)
		} else if found {
			rec.SlurmGPUUtil, rec.SlurmGPUUtilValid = u, true
		}
		r.shape(mark)
	}
}

// time parses a time column, noting a malformed value.
func (r *Reader) time(n *slurmext.Notes, name, v string) time.Time {
	t, err := slurmext.ParseSlurmTime(v, r.opts.Location)
	if err != nil {
		n.Add(name, "%v", err)
	}
	return t
}

// tres sanitises a TRES column and notes one that does not parse; the text
// is kept either way, since GPUsFromTRES reads what it can.
func (r *Reader) tres(n *slurmext.Notes, name, v string) string {
	v = n.Text(name, v, slurmext.MaxFieldBytes)
	if err := slurmext.CheckTRES(v); err != nil {
		mark := len(*n)
		n.Add(name, "%v", err)
		r.shape(mark)
	}
	return v
}

// ErrBadUsage means a CPU time or memory size of sacct's accounting
// (TotalCPU, MaxRSS, ReqMem) is malformed.
var ErrBadUsage = errors.New("malformed sacct accounting value")

// ParseCPUTime parses a CPU time as sacct prints TotalCPU, UserCPU and
// SystemCPU (Slurm's _elapsed_time): "D-HH:MM:SS" from a day on,
// "HH:MM:SS" from an hour on, "MM:SS.mmm" below an hour, and "00:MM:SS"
// when the fraction is 0. A fraction is accepted in every form. Unlike a
// time limit it is never a bare number of minutes or UNLIMITED. Errors wrap
// ErrBadUsage.
func ParseCPUTime(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	if strings.Contains(t, ":") {
		if d, ok := slurmext.ParseClock(t); ok {
			return d, nil
		}
	}
	return 0, fmt.Errorf("CPU time %s: want [D-][HH:]MM:SS[.mmm]: %w", slurmext.QuoteShort(s), ErrBadUsage)
}

// ParseReqMem parses sacct's ReqMem, the memory a job requested, into bytes
// in total. Slurm 21.08 and later print the total with a binary unit letter
// ("16000M", "1G"; convert_num_unit: powers of 1024; --noconvert keeps the
// "M", SEEN on 22.05.8); earlier versions append 'n' (per node) or 'c' (per
// CPU), which are multiplied by nodes or cpus. known is false for a
// request that names no size: empty, "0" (--mem=0, all of a node's memory)
// or a per-node or per-CPU request whose count is unknown (0). A number
// without a unit letter is an error: Slurm does not print one, and
// megabytes and bytes cannot be told apart. Errors wrap ErrBadUsage.
func ParseReqMem(s string, cpus, nodes int) (bytes uint64, known bool, err error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, false, nil
	}
	per := 1
	switch t[len(t)-1] {
	case 'n':
		per, t = nodes, t[:len(t)-1]
	case 'c':
		per, t = cpus, t[:len(t)-1]
	}
	v, ok := slurmext.ParseSize(t)
	if ok && v != 0 && t[len(t)-1] >= '0' && t[len(t)-1] <= '9' {
		ok = false // no unit letter
	}
	if !ok {
		return 0, false, fmt.Errorf("ReqMem %s: want a size such as 16000M, 4G or 4000Mc: %w", slurmext.QuoteShort(s), ErrBadUsage)
	}
	if v == 0 || per <= 0 {
		return 0, false, nil
	}
	if v > slurmext.MaxUsageBytes/uint64(per) {
		return 0, false, fmt.Errorf("ReqMem %s × %d: too large: %w", slurmext.QuoteShort(s), per, ErrBadUsage)
	}
	return v * uint64(per), true, nil
}

// parseRSS parses a resident memory size as sacct prints MaxRSS and the mem
// item of TRESUsageInMax: bytes with a binary unit letter ("6292K",
// "1.50G") or, with --noconvert, plain bytes. known is false for "0": a
// running process has resident memory, so 0 is a step jobacct_gather never
// sampled, not a measurement.
func parseRSS(s string) (bytes uint64, known bool, err error) {
	t := strings.TrimSpace(s)
	v, ok := slurmext.ParseSize(t)
	if !ok {
		return 0, false, fmt.Errorf("memory size %s: want bytes or a size such as 6292K: %w", slurmext.QuoteShort(s), ErrBadUsage)
	}
	return v, v > 0, nil
}

// hostUsage reads the CPU time and memory peak of a line into r.lu,
// noting a malformed value with its line; the probe counts it against the
// layout.
func (r *Reader) hostUsage(n *slurmext.Notes, get func(sacctColumn) string) {
	lu := &r.lu
	if v := get(colTotalCPU); strings.TrimSpace(v) != "" {
		mark := len(*n)
		if d, err := ParseCPUTime(v); err != nil {
			n.Add("TotalCPU", "line %d: %v", r.line, err)
			lu.cpuBad = true
		} else {
			lu.TotalCPU, lu.TotalCPUValid = d, true
		}
		r.shape(mark)
	}
	column, v := "MaxRSS", get(colMaxRSS)
	if strings.TrimSpace(v) == "" && r.layout.cols[colMaxRSS] < 0 {
		// Without a MaxRSS column, TRESUsageInMax holds the same peak.
		// gpuUsage has noted a malformed string already.
		tres := get(colTRESUsageInMax)
		if slurmext.CheckTRES(tres) != nil {
			lu.rssBad = true
			return
		}
		column, v = "TRESUsageInMax", ""
		if m, ok := slurmext.UsageItem(tres, "mem"); ok {
			v = m
		}
	}
	if strings.TrimSpace(v) == "" {
		return
	}
	mark := len(*n)
	if b, known, err := parseRSS(v); err != nil {
		n.Add(column, "line %d: %v", r.line, err)
		lu.rssBad = true
	} else if known {
		lu.MemPeak, lu.MemPeakValid = b, true
	}
	r.shape(mark)
}

// reqMem reads a job line's ReqMem into r.lu. ReqTRES, which holds the
// same request, stays as it is (see MemFromTRES).
func (r *Reader) reqMem(n *slurmext.Notes, rec *slurmext.JobRecord, v string) {
	if strings.TrimSpace(v) == "" {
		return
	}
	mark := len(*n)
	b, known, err := ParseReqMem(v, rec.CPUs, rec.NodeCount)
	if err != nil {
		n.Add("ReqMem", "line %d: %v", r.line, err)
	}
	r.lu.ReqMem, r.lu.ReqMemValid = b, known
	r.shape(mark)
}

// jobUsage is the slurmext.HostUsage a job line gives its job by itself.
func (lu *lineUsage) jobUsage() slurmext.HostUsage {
	u := lu.HostUsage
	if lu.cpuBad {
		u.TotalCPU, u.TotalCPUValid = 0, false
	}
	if lu.rssBad {
		u.MemPeak, u.MemPeakValid = 0, false
	}
	return u
}
