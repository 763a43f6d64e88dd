package analysis

import (
	"slices"
	"strings"
	"time"

	"github.com/gpuprof/gpuprof/gpu"
	"github.com/gpuprof/gpuprof/internal/present"
	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/slurmext"
)

// Job is one job as the analysis sees it: the scheduler's view and a
// summary of every GPU it held. cmd/ builds it from a store.JobView with
// FromView; tests and generators fill it in directly.
//
// Values may be missing (each has a validity flag or a zero meaning
// "unknown") and may be broken: the analysis ignores and counts what is
// absurd rather than trusting it (see DataNotes).
type Job struct {
	Cluster string
	ID      string // raw job id, as SLURM_JOB_ID
	// ArrayJobID is the array's job id for an array task, "" otherwise.
	ArrayJobID string
	User       string
	Account    string
	Partition  string
	QOS        string
	Name       string
	// State is the Slurm base state in capitals (COMPLETED, FAILED,
	// TIMEOUT, OUT_OF_MEMORY, …); "" when no scheduler record exists.
	State slurmext.JobState

	// Zero times are unknown.
	Submit, Eligible, Start, End time.Time
	// TimeLimit is the requested limit; Unlimited is set for UNLIMITED.
	// Both zero: unknown.
	TimeLimit time.Duration
	Unlimited bool

	// ExitKnown is false when neither the scheduler nor an epilog reported
	// the exit.
	ExitKnown  bool
	ExitStatus int
	ExitSignal int

	// GPUs requested: whole GPUs, their type when one was named, and
	// shards.
	ReqGPUs    int
	ReqGPUType string
	ReqShards  int

	// What the queue replay (WhatIf) reads besides: the nodes the job ran
	// on (count and hostlist), why it last waited (Slurm's reason) and how
	// often it was requeued. Readers that load lean records leave them
	// zero, but for the node list of a job whose start is its end (what
	// started needs). A job without a node list in its record has its
	// profiles' nodes.
	NodeCount int
	NodeList  string
	Reason    string
	Restarts  int

	// HasGPUData is true when at least one GPU reading (utilisation or
	// memory) was recorded; false for history imported from sacct and for
	// profiles recorded by a hook alone.
	HasGPUData bool
	// Partial is true when a profile misses part of the job's life.
	Partial bool

	// IOWait is the fraction of the job's wall time spent stalled on block
	// IO, measured in IOScope (profile.IOScopeCgroup, …Process, …Node).
	IOWait      float64
	IOWaitValid bool
	IOScope     string

	// GPUs are the GPUs the job held, on all its nodes, including those it
	// never touched.
	GPUs []GPU
}

// GPU is what was measured on one GPU a job held.
type GPU struct {
	Node        string
	UUID        string // "" when unknown (sacct history)
	Model       string // e.g. "NVIDIA H100 80GB HBM3"
	MemoryTotal uint64 // bytes; 0 when unknown

	// VRAMPeak is the highest memory use seen, in bytes.
	VRAMPeak      uint64
	VRAMPeakValid bool
	// VRAMFloor is the memory the job held for at least 90 % of its sampled
	// time (the 10th percentile, nearest rank, of the time series' bucket
	// maxima). It tells a steady footprint (a loaded model) from a peak
	// reached once. Valid only when the time series was loaded.
	VRAMFloor      uint64
	VRAMFloorValid bool

	// Utilisation in percent (0–100): the mean, the median and 95th
	// percentile of the samples, and the maximum.
	UtilMean      float64
	UtilMeanValid bool
	UtilP50       float64
	UtilP95       float64
	UtilPctValid  bool // UtilP50 and UtilP95
	UtilMax       float64
	UtilMaxValid  bool
	// IdleFraction is the fraction (0–1) of samples at 0 % utilisation.
	IdleFraction float64
	IdleValid    bool

	// IdleAllocation: held for the whole job with no process ever on it
	// and no utilisation (the recorder's flag).
	IdleAllocation bool
	// Preallocated: a framework reserved nearly all the memory at start
	// and held it flat (TensorFlow, JAX), so VRAMPeak says what was
	// reserved, not what was needed.
	Preallocated bool
	// Shared: another job used this GPU at the same time (shards, MPS);
	// the readings are then the job's processes', not the device's.
	Shared bool

	EnergyJ     float64 // joules
	EnergyValid bool

	// Activity is what NVML's GPM measured (Hopper and later): the share
	// of the SMs busy, not the duty cycle (UtilMean says whether any kernel
	// ran, SMMean how much of the GPU the kernels used). Means and the
	// SM p95 in percent over ActivitySeconds of readings. ActivityValid is
	// false where GPM gave nothing (a GPU without it, an older profile):
	// unknown, never 0. ActivityScope is profile.ActivityScope*: on a
	// shared GPU the readings are the whole device's, not the job's.
	SMMean          float64
	SMP95           float64
	TensorMean      float64
	DRAMMean        float64
	ActivitySeconds float64
	ActivityScope   string
	ActivityValid   bool

	// XIDs counts the XID errors seen on the GPU during the job by class
	// (gpu.XIDInfo.Class); XIDHardware are the GPU's or the driver's.
	XIDs         int
	XIDsHardware int

	// FromSlurm: the readings are Slurm's own accounting (acct_gather_gpu:
	// sacct's TRESUsageInMax gres/gpumem and TRESUsageInAve gres/gpuutil),
	// job-wide, not gpuprof's per-GPU samples: no node, model or card size,
	// the job's mean utilisation on every GPU and its memory peak on the
	// first.
	FromSlurm bool
}

// Started reports whether the job ran: the one rule, slurmext.Started. A
// job cancelled while pending (no start, or a start equal to its end with
// no nodes) did not, and the analysis gives it no start: no GPU time, no
// wait, not among the jobs started, not in the queue replay's calibration.
func (j *Job) Started() bool { return slurmext.Started(j.Start, j.End, j.NodeList) }

// FromView builds a Job from the scheduler's record (nil when none arrived)
// and the per-node profiles (empty when there are no GPU readings), the two
// halves of a store.JobView. When rec is nil, identity, times and exit
// come from the profiles: the earliest start, the latest end (unknown while
// a node still runs the job) and the first non-zero exit.
func FromView(rec *slurmext.JobRecord, profiles []profile.Job) Job {
	var j Job
	if rec != nil {
		j = Job{
			Cluster:    rec.Cluster,
			ID:         rec.JobID,
			ArrayJobID: rec.ArrayJobID,
			User:       rec.User,
			Account:    rec.Account,
			Partition:  rec.Partition,
			QOS:        rec.QOS,
			Name:       rec.Name,
			State:      rec.State,
			Submit:     rec.Submit,
			Eligible:   rec.Eligible,
			Start:      rec.Start,
			End:        rec.End,
			TimeLimit:  rec.TimeLimit,
			Unlimited:  rec.Unlimited,
			// A record with an end time is a finished job: its exit code is
			// the scheduler's, even when that is 0:0.
			ExitKnown:  !rec.End.IsZero() && !rec.ExitUnknown,
			ExitStatus: rec.ExitStatus,
			ExitSignal: rec.ExitSignal,
			ReqGPUs:    rec.ReqGPUs,
			ReqGPUType: rec.ReqGPUType,
			ReqShards:  rec.ReqShards,
			NodeCount:  rec.NodeCount,
			NodeList:   rec.NodeList,
			Reason:     rec.Reason,
			Restarts:   rec.Restarts,
		}
	} else if len(profiles) > 0 {
		j = fromProfilesOnly(profiles)
	}

	var io profile.IOWait
	n := 0
	for i := range profiles {
		n += len(profiles[i].GPUs)
	}
	if j.NodeList == "" {
		// A profile is a node's record of the job: it ran there (see
		// started), whatever the scheduler's record lacks.
		j.NodeList = profileNodes(profiles)
	}
	if n > 0 {
		j.GPUs = make([]GPU, 0, n)
	}
	for i := range profiles {
		p := &profiles[i]
		if p.Partial {
			j.Partial = true
		}
		// Observe keeps the least precise scope of all nodes, so the
		// fraction is never reported under a better name than it has.
		io.Observe(p.IO.Scope, p.IO.StallSeconds, p.IO.Seconds)
		for k := range p.GPUs {
			g := fromProfileGPU(p.Node, &p.GPUs[k])
			if g.UtilMeanValid || g.VRAMPeakValid {
				j.HasGPUData = true
			}
			j.GPUs = append(j.GPUs, g)
		}
	}
	if j.ReqGPUs == 0 && j.ReqShards == 0 {
		// No request in a scheduler record (none arrived, or jobcomp's,
		// which has no TRES): the allocation slurmctld gave each node, as
		// its agent read it, says the job held shards of a GPU.
		j.ReqShards = profileShards(profiles)
	}
	j.IOWait, j.IOWaitValid = io.Fraction()
	j.IOScope = io.Scope
	if len(j.GPUs) == 0 && rec != nil {
		j.GPUs = slurmReadings(rec)
		j.HasGPUData = len(j.GPUs) > 0
	}
	return j
}

// profileShards is the shards the nodes' profiles say Slurm allocated
// the job (profile.Job.Shards, only where the allocation was read), in
// all: a TRES count, as a scheduler record's ReqShards is.
func profileShards(profiles []profile.Job) int {
	n := 0
	for i := range profiles {
		if profiles[i].AllocKnown {
			n += profiles[i].Shards
		}
	}
	return n
}

// slurmReadings turns the GPU readings of Slurm's own accounting into GPU
// records for a job gpuprof did not profile (sacct history on a cluster
// with acct_gather_gpu): one per GPU requested (one for a shard job), each
// with the job's mean utilisation, the memory peak on the first. nil when
// Slurm recorded neither.
func slurmReadings(rec *slurmext.JobRecord) []GPU {
	if !rec.SlurmGPUMemValid && !rec.SlurmGPUUtilValid {
		return nil
	}
	n := rec.ReqGPUs
	if n <= 0 {
		if rec.ReqShards <= 0 {
			return nil // no GPU requested: nothing to attribute them to
		}
		n = 1
	}
	n = min(n, maxSlurmGPUs)
	gs := make([]GPU, n)
	for i := range gs {
		g := &gs[i]
		g.FromSlurm = true
		if rec.SlurmGPUUtilValid {
			g.UtilMean, g.UtilMeanValid = rec.SlurmGPUUtil, true
		}
	}
	if rec.SlurmGPUMemValid {
		gs[0].VRAMPeak, gs[0].VRAMPeakValid = rec.SlurmGPUMem, true
	}
	return gs
}

// maxSlurmGPUs bounds the records slurmReadings makes for one job: a larger
// GPU count is a parsing error the analysis counts elsewhere.
const maxSlurmGPUs = 1024

// profileNodes lists the nodes of profiles as a hostlist ("a,b"), each
// once, in their order.
func profileNodes(profiles []profile.Job) string {
	var nodes []string
	for i := range profiles {
		if n := profiles[i].Node; n != "" && !slices.Contains(nodes, n) {
			nodes = append(nodes, n)
		}
	}
	return strings.Join(nodes, ",")
}

func fromProfilesOnly(profiles []profile.Job) Job {
	first := &profiles[0]
	j := Job{
		Cluster:   first.Cluster,
		ID:        first.JobID,
		User:      first.User,
		Account:   first.Account,
		Partition: first.Partition,
		Start:     first.Start,
		End:       first.End,
		ExitKnown: true,
	}
	for i := range profiles {
		p := &profiles[i]
		if !p.Start.IsZero() && (j.Start.IsZero() || p.Start.Before(j.Start)) {
			j.Start = p.Start
		}
		switch {
		case p.End.IsZero() || j.End.IsZero():
			j.End = time.Time{} // a node still runs it: no end yet
		case p.End.After(j.End):
			j.End = p.End
		}
		if !p.ExitKnown {
			j.ExitKnown = false
		} else if j.ExitStatus == 0 && j.ExitSignal == 0 {
			j.ExitStatus, j.ExitSignal = p.ExitStatus, p.ExitSignal
		}
	}
	if !j.ExitKnown {
		j.ExitStatus, j.ExitSignal = 0, 0
	}
	return j
}

func fromProfileGPU(node string, p *profile.GPU) GPU {
	g := GPU{
		Node:           node,
		UUID:           p.UUID,
		Model:          p.Model,
		MemoryTotal:    p.MemoryTotal,
		VRAMPeak:       p.MemPeak,
		VRAMPeakValid:  p.MemSamples > 0,
		UtilMax:        float64(p.UtilMax),
		UtilMaxValid:   p.Samples > 0,
		IdleAllocation: p.IdleAllocation,
		Preallocated:   p.Preallocated,
		Shared:         p.Shared,
		EnergyJ:        p.EnergyJ,
		EnergyValid:    p.EnergyValid,
	}
	g.UtilMean, g.UtilMeanValid = p.UtilMean()
	if a := p.Activity; a != nil {
		if sm, ok := a.SM.Mean(); ok {
			g.SMMean, g.ActivityValid = sm, true
			g.SMP95, _ = a.SM.Percentile(95)
			g.TensorMean, _ = a.Tensor.Mean()
			g.DRAMMean, _ = a.DRAM.Mean()
			g.ActivitySeconds, g.ActivityScope = a.Seconds, a.Scope
		}
	}
	g.XIDs = p.XIDCount
	for _, x := range p.XIDs {
		if gpu.XID(x.Code).Class == gpu.XIDHardware {
			g.XIDsHardware++
		}
	}
	p50, ok50 := p.UtilPercentile(50)
	p95, ok95 := p.UtilPercentile(95)
	g.UtilP50, g.UtilP95, g.UtilPctValid = float64(p50), float64(p95), ok50 && ok95
	g.IdleFraction, g.IdleValid = p.IdleFraction()
	if p.MemSamples > 0 {
		g.VRAMFloor, g.VRAMFloorValid = p.Series.MemFloor()
	}
	return g
}

// Facts are the GPU's facts as every page shows them (present.GPUFacts):
// gpuprof show and the terminal UI's detail render this one view.
func (g *GPU) Facts() present.GPUFacts {
	return present.GPUFacts{
		UtilMean: g.UtilMean, UtilKnown: g.UtilMeanValid,
		UtilP95: g.UtilP95, P95Known: g.UtilPctValid,
		Idle: g.IdleFraction, IdleKnown: g.IdleValid,
		MemPeak: g.VRAMPeak, MemTotal: g.MemoryTotal, MemKnown: g.VRAMPeakValid,
		EnergyJ: g.EnergyJ, EnergyKnown: g.EnergyValid,
		IdleAllocation: g.IdleAllocation, Preallocated: g.Preallocated, Shared: g.Shared,
	}
}
