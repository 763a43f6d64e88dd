package analysis

import (
	"math"
	"time"

	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/slurmext"
)

// maxSpan bounds every duration the analysis accepts (run time, wait): a
// longer one is a clock or parsing error, not a job.
const maxSpan = 400 * 24 * time.Hour

// DataNotes counts readings the analysis ignored because they cannot be
// true. Each ignored value is counted once, under its first problem.
type DataNotes struct {
	NaN          int `json:"nan"`            // NaN readings
	Inf          int `json:"inf"`            // ±Inf readings
	Negative     int `json:"negative"`       // negative utilisation, fraction or energy
	UtilOver100  int `json:"util_over_100"`  // utilisation above 100 %
	FracOver1    int `json:"frac_over_1"`    // idle or IO-wait fraction above 1
	PeakOverCard int `json:"peak_over_card"` // memory peak above the card's size
	// Inconsistent counts values that contradict another: a memory floor
	// above the peak.
	Inconsistent int `json:"inconsistent"`
	// NoCardSize counts memory peaks without the card's size: kept in
	// bytes, but no fraction of the card can be computed.
	NoCardSize int `json:"no_card_size"`
	// BadTimes counts times before 1970 or after 9999, times out of order
	// (end before start, start before submit) and spans longer than 400
	// days.
	BadTimes int `json:"bad_times"`
}

// Add adds o's counts to n.
func (n *DataNotes) Add(o DataNotes) {
	n.NaN += o.NaN
	n.Inf += o.Inf
	n.Negative += o.Negative
	n.UtilOver100 += o.UtilOver100
	n.FracOver1 += o.FracOver1
	n.PeakOverCard += o.PeakOverCard
	n.Inconsistent += o.Inconsistent
	n.NoCardSize += o.NoCardSize
	n.BadTimes += o.BadTimes
}

// Total returns the number of values ignored or degraded.
func (n DataNotes) Total() int {
	return n.NaN + n.Inf + n.Negative + n.UtilOver100 + n.FracOver1 +
		n.PeakOverCard + n.Inconsistent + n.NoCardSize + n.BadTimes
}

// number checks a reading that must be finite and within [0, hi]; over
// counts values above hi. It returns whether the reading is usable.
func (n *DataNotes) number(v float64, valid bool, hi float64, over *int) bool {
	switch {
	case !valid:
		return false // missing is not wrong
	case math.IsNaN(v):
		n.NaN++
	case math.IsInf(v, 0):
		n.Inf++
	case v < 0:
		n.Negative++
	case v > hi:
		*over++
	default:
		return true
	}
	return false
}

// Times outside [minYear, maxYear] are clock or parsing errors; JSON cannot
// even encode a year beyond 9999.
const minYear, maxYear = 1970, 9999

// checkTime returns t, or the zero time (unknown) when t is implausible.
func (n *DataNotes) checkTime(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	if y := t.Year(); y < minYear || y > maxYear {
		n.BadTimes++
		return time.Time{}
	}
	return t
}

// Outcome is how a job ended, as far as the record tells: Slurm's outcome
// class of its state (slurmext.JobState.Outcome), the one rule the TUI and the
// report apply too.
type Outcome = slurmext.Outcome

// Outcomes (see slurmext.Outcome for which states each covers).
const (
	OutcomeUnknown   = slurmext.OutcomeUnknown
	OutcomeCompleted = slurmext.OutcomeCompleted
	OutcomeFailed    = slurmext.OutcomeFailed
	OutcomeTimeout   = slurmext.OutcomeTimeout
	OutcomeCancelled = slurmext.OutcomeCancelled
	OutcomeRunning   = slurmext.OutcomeRunning
)

// outcomeOf is the outcome of j's state. Without a scheduler state, an
// exit reported by the epilog decides: 0:0 completed, anything else failed.
func outcomeOf(j *Job) Outcome {
	if j.State != "" {
		return j.State.Outcome()
	}
	switch {
	case !j.ExitKnown:
		return OutcomeUnknown
	case j.ExitStatus == 0 && j.ExitSignal == 0:
		return OutcomeCompleted
	}
	return OutcomeFailed
}

// Metrics are the numbers the rules read, derived from a Job once and
// cleaned of absurd values (counted in Notes). Job-level utilisation
// statistics are the mean over the job's GPUs of each GPU's statistic
// (every GPU is held for the same time, so this is the GPU-time-weighted
// value); UtilMax is the highest.
type Metrics struct {
	// Start and Submit are the job's, or zero when unknown or implausible;
	// Start is zero too for a job that never started (Job.started).
	Start, Submit time.Time

	Elapsed      time.Duration
	ElapsedValid bool
	Wait         time.Duration // start − eligible (or submit)
	WaitValid    bool
	Outcome      Outcome

	// GPUs is how many GPUs the job held: the whole GPUs requested, or the
	// GPUs recorded when more; a shard job without a profile counts one (an
	// upper bound: it held part of one).
	GPUs int
	// Shards is how many shards of a GPU the job held (Job.ReqShards: the
	// scheduler's record, else the allocation its nodes' agents read); 0
	// for a job of whole GPUs or one whose allocation is not known.
	Shards int
	// MeasuredGPUs have at least one usable utilisation or memory reading.
	MeasuredGPUs int
	// UnusedGPUs were recorded as idle allocations or had a mean
	// utilisation below classes.idle_util_max. GPUs without readings are
	// never counted unused.
	UnusedGPUs int
	// MemoryHeldGPUs are the UnusedGPUs on which the job held GPU memory:
	// a process of it was on the GPU (not an idle allocation) and the
	// memory peak is above zero. A program that allocates GPU memory
	// fails without a GPU, so advice never tells such a job to run
	// without one (gpusUsed).
	MemoryHeldGPUs int
	// IdleAllocatedGPUs carry the recorder's idle-allocation flag.
	IdleAllocatedGPUs int
	// GPUShare is the GPUs held in GPU-equivalents: GPUs, or for a shard
	// job the shards held ÷ shards configured on its GPU (see counter).
	GPUShare float64
	// GPUHours is GPUShare × the hours of the run counted: the whole run
	// for Measure; inside the window, with a job without an end counted up
	// to Counting.End, in Analyse, Summarise and SummariseWorkload. 0 when
	// the start is unknown.
	GPUHours float64
	// gpuTime is GPUHours exactly, in GPU-nanoseconds (set with it by the
	// counter): what tables over many jobs add (gpuTime).
	gpuTime gpuTime
	// CountStart and CountEnd are the part of the run counted (zero when
	// none); Open is set for a job without an end, counted up to
	// Counting.End.
	CountStart, CountEnd time.Time
	Open                 bool
	// SoFar is how long a job without an end had run by Counting.End
	// (from its start, not clipped to the window); valid when Open. The
	// long-run rules read it, so a job still running counts as the long run
	// it already is.
	SoFar time.Duration

	UtilMean      float64 // percent
	UtilMeanValid bool
	UtilP50       float64
	UtilP50Valid  bool
	UtilP95       float64
	UtilP95Valid  bool
	UtilMax       float64
	UtilMaxValid  bool
	IdleFraction  float64
	IdleValid     bool

	// SMMean is the mean SM activity (GPM, percent of the SMs busy) over
	// the SMGPUs of the measured GPUs that have it; TensorMean the tensor
	// cores'. SMShared: some of it is a shared GPU's, the whole device's
	// and not the job's. Unknown (not valid) without GPM, never 0.
	SMMean          float64
	SMMeanValid     bool
	SMGPUs          int
	SMShared        bool
	TensorMean      float64
	TensorMeanValid bool

	// VRAMPeakFrac is the highest memory peak as a fraction of its card,
	// over the GPUs whose peak is a need (not preallocated); VRAMPeak,
	// VRAMCard and VRAMModel describe that GPU. Without a card size the
	// peak is still kept in bytes (VRAMPeakBytesValid) but no fraction.
	VRAMPeakFrac       float64
	VRAMPeakValid      bool
	VRAMPeak           uint64
	VRAMPeakBytesValid bool
	VRAMCard           uint64
	VRAMModel          string
	// Preallocated: at least one GPU's peak was a framework's reservation;
	// VRAMReservedFrac is the highest such peak as a fraction of its card.
	Preallocated     bool
	VRAMReservedFrac float64
	// VRAMSteady is the lowest memory floor / peak over the GPUs where both
	// are known (a preallocated GPU counts as 1: its memory is flat).
	VRAMSteady      float64
	VRAMSteadyValid bool

	IOWait      float64 // fraction of wall time
	IOWaitValid bool
	IOScope     string

	EnergyJ     float64 // sum over the GPUs; valid when every measured GPU reported it
	EnergyValid bool
	Shared      bool // some GPU was shared with another job

	Notes DataNotes
}

// Measure derives the rules' numbers from a job, ignoring (and counting in
// Notes) values that cannot be true.
func Measure(j Job, c Config) Metrics {
	var m Metrics
	measure(&j, &c, &m)
	return m
}

// measure fills m from j: its times, GPUs and the per-GPU readings' means,
// with the impossible readings noted, and counts its whole run. It runs
// once per job in every bulk pass: the loop over the GPUs stays here and
// fills its sums and counts at once, in one gpuSums on the stack.
func measure(j *Job, c *Config, m *Metrics) {
	*m = Metrics{Outcome: outcomeOf(j)}
	n := &m.Notes
	measureTimes(j, m)

	m.GPUs = max(j.ReqGPUs, len(j.GPUs))
	if m.GPUs == 0 && j.ReqShards > 0 {
		m.GPUs = 1
	}
	m.Shards = max(j.ReqShards, 0)

	var sum gpuSums
	for i := range j.GPUs {
		g := &j.GPUs[i]
		measured := false
		meanOK := n.number(g.UtilMean, g.UtilMeanValid, 100, &n.UtilOver100)
		if meanOK {
			sum.mean += g.UtilMean
			sum.nMean++
			measured = true
		}
		if n.number(g.UtilP50, g.UtilPctValid, 100, &n.UtilOver100) {
			sum.p50 += g.UtilP50
			sum.nP50++
			measured = true
		}
		if n.number(g.UtilP95, g.UtilPctValid, 100, &n.UtilOver100) {
			sum.p95 += g.UtilP95
			sum.nP95++
			measured = true
		}
		if n.number(g.UtilMax, g.UtilMaxValid, 100, &n.UtilOver100) {
			m.UtilMax = max(m.UtilMax, g.UtilMax)
			m.UtilMaxValid = true
			measured = true
		}
		if n.number(g.IdleFraction, g.IdleValid, 1, &n.FracOver1) {
			sum.idle += g.IdleFraction
			sum.nIdle++
		}
		if measureVRAM(g, m) {
			measured = true
		}
		smOK := n.number(g.SMMean, g.ActivityValid, 100, &n.UtilOver100) &&
			n.number(g.TensorMean, g.ActivityValid, 100, &n.UtilOver100)
		if smOK {
			sum.sm += g.SMMean
			sum.tensor += g.TensorMean
			m.SMGPUs++
			measured = true
			if g.ActivityScope == profile.ActivityScopeSharedGPU {
				m.SMShared = true
			}
		}
		if measured {
			m.MeasuredGPUs++
			// No upper bound for energy: over stays untouched.
			if n.number(g.EnergyJ, g.EnergyValid, math.MaxFloat64, &n.Negative) {
				m.EnergyJ += g.EnergyJ
				sum.nEnergy++
			}
		}
		if g.Shared {
			m.Shared = true
		}
		if g.IdleAllocation {
			m.IdleAllocatedGPUs++
		}
		// The idle test reads the GPU's SM activity where GPM measured the
		// job's own (not a shared GPU's device), else its duty cycle.
		idle := meanOK && g.UtilMean < c.Classes.IdleUtilMax
		if smOK && g.ActivityScope != profile.ActivityScopeSharedGPU {
			idle = g.SMMean < c.Classes.IdleUtilMax
		}
		if g.IdleAllocation || idle {
			m.UnusedGPUs++
			if !g.IdleAllocation && g.VRAMPeakValid && g.VRAMPeak > 0 {
				m.MemoryHeldGPUs++
			}
		}
	}
	sum.averages(m)
	m.EnergyValid = sum.nEnergy > 0 && sum.nEnergy == m.MeasuredGPUs

	if n.number(j.IOWait, j.IOWaitValid, 1, &n.FracOver1) && j.IOScope != profile.IOScopeNone {
		m.IOWait, m.IOWaitValid, m.IOScope = j.IOWait, true, j.IOScope
	}
	// The whole run, with no window: a caller that counts a period
	// recounts with its counter.
	k := counter{assumeShards: c.Counting.shardsPerGPU()}
	k.count(j, m)
}

// measureTimes fills m's start, submission, elapsed time and wait from j,
// each time checked (Notes.checkTime); an elapsed time or a wait that is
// negative or longer than maxSpan is noted as a bad time and left unset.
func measureTimes(j *Job, m *Metrics) {
	n := &m.Notes
	if j.Started() {
		m.Start = n.checkTime(j.Start)
	}
	m.Submit = n.checkTime(j.Submit)
	end, eligible := n.checkTime(j.End), n.checkTime(j.Eligible)
	if !m.Start.IsZero() && !end.IsZero() {
		if d := end.Sub(m.Start); d >= 0 && d <= maxSpan {
			m.Elapsed, m.ElapsedValid = d, true
		} else {
			n.BadTimes++
		}
	}
	from := eligible
	if from.IsZero() {
		from = m.Submit
	}
	if !from.IsZero() && !m.Start.IsZero() {
		if d := m.Start.Sub(from); d >= 0 && d <= maxSpan {
			m.Wait, m.WaitValid = d, true
		} else {
			n.BadTimes++
		}
	}
}

// gpuSums is what measure sums over a job's GPUs for the means: the sums
// and how many GPUs had each reading.
type gpuSums struct {
	mean, p50, p95, idle, sm, tensor  float64
	nMean, nP50, nP95, nIdle, nEnergy int
}

// averages sets m's per-GPU means from the sums, each valid where a GPU
// had the reading; the SM and tensor means are over m.SMGPUs.
func (s *gpuSums) averages(m *Metrics) {
	if s.nMean > 0 {
		m.UtilMean, m.UtilMeanValid = s.mean/float64(s.nMean), true
	}
	if s.nP50 > 0 {
		m.UtilP50, m.UtilP50Valid = s.p50/float64(s.nP50), true
	}
	if s.nP95 > 0 {
		m.UtilP95, m.UtilP95Valid = s.p95/float64(s.nP95), true
	}
	if s.nIdle > 0 {
		m.IdleFraction, m.IdleValid = s.idle/float64(s.nIdle), true
	}
	if m.SMGPUs > 0 {
		m.SMMean, m.SMMeanValid = s.sm/float64(m.SMGPUs), true
		m.TensorMean, m.TensorMeanValid = s.tensor/float64(m.SMGPUs), true
	}
}

// Compute is the measure of how much of its GPUs a job used that the idle
// and compute rules read: the mean SM activity (MetricSMMean) when GPM
// measured every measured GPU as the job's own, else the mean duty cycle
// (MetricUtilMean: the share of time any kernel ran). ok is false when
// neither is known.
func (m *Metrics) Compute() (v float64, measure Metric, ok bool) {
	if m.SMMeanValid && m.SMGPUs == m.MeasuredGPUs && !m.SMShared {
		return m.SMMean, MetricSMMean, true
	}
	return m.UtilMean, MetricUtilMean, m.UtilMeanValid
}

// measureVRAM folds one GPU's memory readings into m and reports whether
// it had a usable one.
func measureVRAM(g *GPU, m *Metrics) bool {
	if !g.VRAMPeakValid {
		return false
	}
	n := &m.Notes
	card := g.MemoryTotal
	if card > 0 && g.VRAMPeak > card {
		n.PeakOverCard++
		return false
	}
	floorOK := g.VRAMFloorValid
	if floorOK && g.VRAMFloor > g.VRAMPeak {
		n.Inconsistent++
		floorOK = false
	}
	if card == 0 {
		n.NoCardSize++
	}
	frac := 0.0
	if card > 0 {
		frac = float64(g.VRAMPeak) / float64(card)
	}
	if g.Preallocated {
		m.Preallocated = true
		m.VRAMReservedFrac = max(m.VRAMReservedFrac, frac)
		steady(m, 1)
		return true
	}
	if floorOK && g.VRAMPeak > 0 {
		steady(m, float64(g.VRAMFloor)/float64(g.VRAMPeak))
	}
	// The GPU with the highest fraction describes the job; without card
	// sizes, the highest peak in bytes.
	switch {
	case card > 0 && (!m.VRAMPeakValid || frac > m.VRAMPeakFrac):
		m.VRAMPeakFrac, m.VRAMPeakValid = frac, true
	case card == 0 && !m.VRAMPeakValid && (!m.VRAMPeakBytesValid || g.VRAMPeak > m.VRAMPeak):
	default:
		return true
	}
	m.VRAMPeak, m.VRAMPeakBytesValid, m.VRAMCard, m.VRAMModel = g.VRAMPeak, true, card, g.Model
	return true
}

func steady(m *Metrics, s float64) {
	if !m.VRAMSteadyValid || s < m.VRAMSteady {
		m.VRAMSteady, m.VRAMSteadyValid = s, true
	}
}
