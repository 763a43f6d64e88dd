package slurmext

import "time"

// HostUsage is what Slurm's accounting measured of a job's CPUs and host
// memory, and the memory it asked for: what `gpuprof show` turns into CPU
// efficiency (TotalCPU ÷ (Elapsed × AllocCPUS), see CPUEfficiency) and
// "host memory peak … of … requested". Each value comes with a Valid flag:
// a value sacct did not report, or reported malformed, is unknown, never 0.
type HostUsage struct {
	// TotalCPU is the CPU time (user + system) of all the job's steps: the
	// sum of their sacct TotalCPU. Only step lines carry it; the job line's
	// is their sum with steps and 00:00:00 without (sacct -X), so a job
	// read without its steps has it unknown.
	TotalCPU      time.Duration `json:"total_cpu_ns,omitempty"`
	TotalCPUValid bool          `json:"total_cpu_valid,omitempty"`
	// MemPeak is the host memory peak in bytes: the highest sacct MaxRSS
	// (or, without that column, the mem item of TRESUsageInMax) of any
	// step, that is the resident memory of the largest task, as
	// jobacct_gather sampled it. Steps that ended before the first sample
	// report none.
	MemPeak      uint64 `json:"mem_peak,omitempty"`
	MemPeakValid bool   `json:"mem_peak_valid,omitempty"`
	// ReqMem is the host memory the job requested, in bytes, in total:
	// sacct ReqMem (see ParseReqMem). ReqTRES holds the same request
	// (MemFromTRES) where the layout has no ReqMem.
	ReqMem      uint64 `json:"req_mem,omitempty"`
	ReqMemValid bool   `json:"req_mem_valid,omitempty"`
	// TotalCPURead and MemPeakRead say that the import read the job's
	// steps in a layout with that column (MaxRSS or TRESUsageInMax for
	// the peak), each well-formed: a value then unknown is one Slurm's
	// accounting has none of (a step that ended before its first
	// sample), and sacct -j shows none either. False: not imported
	// (jobcomp, sacct -X, a layout without the column), where sacct may
	// have it.
	TotalCPURead bool `json:"total_cpu_read,omitempty"`
	MemPeakRead  bool `json:"mem_peak_read,omitempty"`
}

// CPUEfficiency returns the share of the allocated CPU time the job used,
// TotalCPU ÷ (elapsed × cpus) as seff and jobstats compute it, and whether
// it is known: it needs TotalCPU, a positive run time and the allocated
// CPU count (sacct AllocCPUS/NCPUS). Elapsed is whole seconds in sacct, so a
// job that kept every CPU busy may come out a little above 1.
func (u HostUsage) CPUEfficiency(elapsed time.Duration, cpus int) (float64, bool) {
	if !u.TotalCPUValid || elapsed <= 0 || cpus <= 0 {
		return 0, false
	}
	return u.TotalCPU.Seconds() / (elapsed.Seconds() * float64(cpus)), true
}

// MemFromTRES returns the mem item of a TRES string in bytes ("mem=16000M"
// in ReqTRES: the job's memory request in total, the ReqMem of a layout
// without that column), and whether there is one that is a size above 0.
func MemFromTRES(tres string) (uint64, bool) {
	if CheckTRES(tres) != nil {
		return 0, false
	}
	m, ok := UsageItem(tres, "mem")
	if !ok {
		return 0, false
	}
	b, ok := ParseSize(m)
	return b, ok && b > 0
}
