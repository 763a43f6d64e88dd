package profile

import (
	"slices"
	"time"

	"github.com/gpuprof/gpuprof/gpu"
)

// Thresholds that define the flags. They are constants of the recording
// model, not tuning knobs of the analysis (which has its own config).
const (
	// IdleUtil is the utilisation (percent) at or below which a sample
	// counts as idle.
	IdleUtil = 0
	// PreallocFraction of the card's memory reached within the first
	// PreallocSamples samples, with the memory then staying within
	// PreallocFlat of the card, marks a framework that preallocates.
	PreallocFraction = 0.90
	PreallocSamples  = 3
	PreallocFlat     = 0.02
	// MaxProcessNames bounds the list of process names kept per GPU.
	MaxProcessNames = 32
	// MaxXIDs bounds the XID events kept per GPU (the count is exact).
	MaxXIDs = 64
)

// GPU is a job's profile on one GPU. Its fields are both the running
// accumulator and, once finished, the summary; they are exported so the
// store can persist a running profile and the agent can resume it.
type GPU struct {
	UUID        string `json:"uuid"`
	SlurmIndex  int    `json:"slurm_index"` // position in the node's GRES list; -1 when unknown
	Minor       int    `json:"minor"`       // /dev/nvidiaN minor; -1 when unknown
	Model       string `json:"model,omitempty"`
	MemoryTotal uint64 `json:"memory_total"`

	// Shared is true when another job held this GPU at the same time
	// (shards, MPS): readings were then per process, not per device.
	Shared bool `json:"shared"`

	Samples     int       `json:"samples"`      // samples with a utilisation reading
	UtilSum     uint64    `json:"util_sum"`     // sum of utilisation readings
	UtilMax     uint32    `json:"util_max"`     // percent
	UtilHist    []uint32  `json:"util_hist"`    // 101 bins: count of samples at each integer percent
	IdleSamples int       `json:"idle_samples"` // samples at or below IdleUtil
	MemSamples  int       `json:"mem_samples"`  // samples with a memory reading
	MemPeak     uint64    `json:"mem_peak"`     // bytes, exact at the sampling resolution
	MemActive   int       `json:"mem_active"`   // memory samples since memory first rose above 0
	ProcSamples int       `json:"proc_samples"` // samples with at least one of the job's processes on the GPU
	FirstSample time.Time `json:"first_sample,omitzero"`
	// LastSample is the time of the latest reading: the power integral's
	// previous point (the series only keeps bucket starts, which are coarser).
	LastSample time.Time `json:"last_sample,omitzero"`

	// Preallocation tracking: EarlyHigh is set when memory reached
	// PreallocFraction of the card within PreallocSamples samples of first
	// rising above zero (the job's program starting);
	// MemMinAfterHigh is the lowest memory seen after that point.
	EarlyHigh       bool   `json:"early_high"`
	MemMinAfterHigh uint64 `json:"mem_min_after_high"`

	// Energy: the integral of power over the readings, corrected against
	// the driver's energy counter whenever the agent reads it (at the job's
	// start and end and at most every minute between: it costs ~4 ms a
	// read): the energy between two counter readings is their difference,
	// and only the time since the last one (EnergySinceCounterJ, part of
	// EnergyJ) is integrated. Without a counter, the integral alone. Not
	// attributable on a shared GPU.
	EnergyJ       float64 `json:"energy_j"`
	EnergyValid   bool    `json:"energy_valid"`
	EnergyLastMJ  uint64  `json:"energy_last_mj"`
	EnergyCounter bool    `json:"energy_counter"`
	// EnergySinceCounterJ is the part of EnergyJ integrated from power
	// since the last counter reading, which the next one replaces.
	EnergySinceCounterJ float64 `json:"energy_since_counter_j,omitempty"`
	MaxTempC            uint32  `json:"max_temp_c"`
	TempValid           bool    `json:"temp_valid"`

	// Activity is what GPM measured (SM, tensor, DRAM activity); nil when
	// no reading came: a GPU without GPM, or a profile recorded before
	// gpuprof read it. Unknown, never 0.
	Activity *Activity `json:"activity,omitempty"`

	XIDCount  int      `json:"xid_count"`
	XIDs      []XID    `json:"xids,omitempty"`
	Processes []string `json:"processes,omitempty"`

	// Flags, computed when the profile is finished.
	IdleAllocation bool `json:"idle_allocation"`
	Preallocated   bool `json:"preallocated"`

	Series Series `json:"series"`
}

// XID is one XID error seen on the GPU during the job.
type XID struct {
	Code uint64    `json:"code"`
	Time time.Time `json:"time"`
}

// Reading is what the agent attributes to a job on one GPU at one instant.
type Reading struct {
	Time      time.Time
	MemUsed   gpu.Opt[uint64] // bytes: the device's, or the sum of the job's processes when shared
	Util      gpu.Opt[uint32] // percent: the device's, or the sum of the job's processes when shared
	PowerMW   gpu.Opt[uint32]
	EnergyMJ  gpu.Opt[uint64]
	TempC     gpu.Opt[uint32]
	Processes int  // the job's processes seen on the GPU
	Shared    bool // another job holds the GPU now
	// Activity is the GPU's (or MIG instance's) GPM activity over the
	// interval that ended now, in the scope ActivityScope says; on a shared
	// GPU the device's (GPM has no per-process view).
	Activity      gpu.Opt[gpu.Activity]
	ActivityScope string
}

// NewGPU returns an empty profile for a GPU the job holds.
func NewGPU(d gpu.Device, slurmIndex int, start time.Time, interval time.Duration, maxPoints int) GPU {
	return GPU{
		UUID:        d.UUID,
		SlurmIndex:  slurmIndex,
		Minor:       d.Minor,
		Model:       d.Name,
		MemoryTotal: d.MemoryTotal,
		UtilHist:    make([]uint32, 101),
		Series:      NewSeries(start, interval, maxPoints),
	}
}

// Observe adds one reading. interval is the nominal sampling interval, used
// to bound the power integral across gaps.
func (g *GPU) Observe(r Reading, interval time.Duration) {
	if len(g.UtilHist) != 101 {
		g.UtilHist = make([]uint32, 101)
	}
	prev := g.LastSample
	if g.FirstSample.IsZero() {
		g.FirstSample = r.Time
	}
	g.LastSample = r.Time
	if r.Shared {
		g.Shared = true
	}
	if r.Processes > 0 {
		g.ProcSamples++
	}
	if r.Util.Valid {
		u := min(r.Util.Value, 100)
		g.Samples++
		g.UtilSum += uint64(u)
		g.UtilMax = max(g.UtilMax, u)
		g.UtilHist[u]++
		if u <= IdleUtil {
			g.IdleSamples++
		}
	}
	if r.MemUsed.Valid {
		m := r.MemUsed.Value
		g.MemSamples++
		g.MemPeak = max(g.MemPeak, m)
		if m > 0 || g.MemActive > 0 {
			g.MemActive++
		}
		switch {
		case g.EarlyHigh:
			if m > 0 { // 0: the program has exited (the end-of-job sample)
				g.MemMinAfterHigh = min(g.MemMinAfterHigh, m)
			}
		case g.MemActive > 0 && g.MemActive <= PreallocSamples && g.MemoryTotal > 0 &&
			float64(m) >= PreallocFraction*float64(g.MemoryTotal):
			g.EarlyHigh = true
			g.MemMinAfterHigh = m
		}
	}
	if r.TempC.Valid {
		g.MaxTempC = max(g.MaxTempC, r.TempC.Value)
		g.TempValid = true
	}
	g.observeEnergy(r, prev, interval)
	g.Series.Add(r.Time, r.Util, r.MemUsed)
	if r.Activity.Valid {
		if g.Activity == nil {
			g.Activity = newActivity()
		}
		scope := r.ActivityScope
		if r.Shared {
			scope = ActivityScopeSharedGPU
		}
		if scope == "" {
			scope = ActivityScopeGPU
		}
		g.Activity.observe(r.Activity.Value, scope)
		g.Series.AddActivity(r.Time, r.Activity.Value.SM, r.Activity.Value.Tensor)
	}
}

func (g *GPU) observeEnergy(r Reading, prev time.Time, interval time.Duration) {
	if g.Shared {
		// A shared GPU's energy belongs to several jobs; no fair split exists.
		g.EnergyValid = false
		return
	}
	if r.PowerMW.Valid {
		if !prev.IsZero() && r.Time.After(prev) {
			dt := min(r.Time.Sub(prev), 2*interval)
			e := float64(r.PowerMW.Value) / 1000 * dt.Seconds()
			g.EnergyJ += e
			g.EnergySinceCounterJ += e
		}
		g.EnergyValid = true
	}
	if !r.EnergyMJ.Valid {
		return
	}
	if g.EnergyCounter && r.EnergyMJ.Value >= g.EnergyLastMJ {
		// The counter's difference replaces what power integrated since
		// its last reading.
		g.EnergyJ += float64(r.EnergyMJ.Value-g.EnergyLastMJ)/1000 - g.EnergySinceCounterJ
	}
	// The first reading only starts the counter; a counter that went back
	// (the driver reloaded) keeps the integral and starts again.
	g.EnergySinceCounterJ = 0
	g.EnergyCounter = true
	g.EnergyLastMJ = r.EnergyMJ.Value
	g.EnergyValid = true
}

// AddXID records an XID error.
func (g *GPU) AddXID(code uint64, t time.Time) {
	g.XIDCount++
	if len(g.XIDs) < MaxXIDs {
		g.XIDs = append(g.XIDs, XID{Code: code, Time: t})
	}
}

// AddProcessName records the name of a process seen on the GPU.
func (g *GPU) AddProcessName(name string) {
	if name == "" || slices.Contains(g.Processes, name) || len(g.Processes) >= MaxProcessNames {
		return
	}
	g.Processes = append(g.Processes, name)
}

func (g *GPU) finish() {
	// Without a single utilisation reading there is no evidence either way
	// (a profile recorded by a hook alone): never accuse such a job.
	g.IdleAllocation = g.Samples > 0 && g.ProcSamples == 0 && g.UtilMax <= IdleUtil
	g.Preallocated = g.EarlyHigh && g.MemoryTotal > 0 &&
		float64(g.MemPeak-g.MemMinAfterHigh) <= PreallocFlat*float64(g.MemoryTotal)
}

// UtilMean returns the mean utilisation in percent and whether any sample
// exists.
func (g *GPU) UtilMean() (float64, bool) {
	if g.Samples == 0 {
		return 0, false
	}
	return float64(g.UtilSum) / float64(g.Samples), true
}

// UtilPercentile returns the p-th percentile (0 < p ≤ 100) of utilisation by
// the nearest-rank method: the smallest value v such that at least p % of
// samples are ≤ v. Exact, because readings are integer percent.
func (g *GPU) UtilPercentile(p float64) (uint32, bool) {
	if g.Samples == 0 || !(p > 0 && p <= 100) || len(g.UtilHist) != 101 { // also rejects NaN
		return 0, false
	}
	// p·n first, then /100: p/100 is inexact in binary (0.07·100 is
	// 7.000000000000001), which would push an exact rank one too high.
	exact := p * float64(g.Samples) / 100
	rank := uint64(exact)
	if float64(rank) < exact {
		rank++ // ceil
	}
	rank = max(rank, 1)
	var cum uint64
	for v, c := range g.UtilHist {
		cum += uint64(c)
		if cum >= rank {
			return uint32(v), true
		}
	}
	return g.UtilMax, true
}

// IdleFraction returns the fraction of samples at or below IdleUtil.
func (g *GPU) IdleFraction() (float64, bool) {
	if g.Samples == 0 {
		return 0, false
	}
	return float64(g.IdleSamples) / float64(g.Samples), true
}
