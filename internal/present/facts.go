package present

import (
	"strconv"
	"strings"
)

// GPUFacts are the facts every page shows of one GPU of a job: its
// utilisation (the duty cycle: mean, p95 and idle share), its memory
// peak, its energy and its caveats. gpuprof show and the terminal UI's
// detail both render this one view (analysis.GPU.Facts builds it), so
// that they cannot show different facts of one GPU.
type GPUFacts struct {
	UtilMean  float64 // percent, 0–100
	UtilKnown bool
	UtilP95   float64 // percent
	P95Known  bool
	Idle      float64 // share of samples at 0 %, 0–1
	IdleKnown bool

	MemPeak, MemTotal uint64 // bytes; MemTotal 0 when unknown
	MemKnown          bool

	EnergyJ     float64
	EnergyKnown bool

	IdleAllocation, Preallocated, Shared bool
}

// Util writes the utilisation: "mean 48 %, p95 90 %, idle 3 %", the parts
// known; "not measured" without readings.
func (f GPUFacts) Util() string {
	if !f.UtilKnown {
		return "not measured"
	}
	s := "mean " + Util(f.UtilMean) + " %"
	if f.P95Known {
		s += ", p95 " + Util(f.UtilP95) + " %"
	}
	if f.IdleKnown {
		s += ", idle " + Util(100*f.Idle) + " %"
	}
	return s
}

// Memory writes the memory peak in GiB, with the card's size and the
// share of it when known: "peak 61.3 / 80 GiB (77 %)", "peak 4.5 GiB";
// "not measured" without readings.
func (f GPUFacts) Memory() string {
	if !f.MemKnown {
		return "not measured"
	}
	if f.MemTotal == 0 {
		return "peak " + GiB(f.MemPeak) + " GiB"
	}
	return "peak " + GiB(f.MemPeak) + " / " + GiB(f.MemTotal) + " GiB (" +
		strconv.FormatFloat(100*float64(f.MemPeak)/float64(f.MemTotal), 'f', 0, 64) + " %)"
}

// Energy writes the energy the GPU drew (Energy), or "not measured".
func (f GPUFacts) Energy() string {
	if !f.EnergyKnown {
		return "not measured"
	}
	return Energy(f.EnergyJ)
}

// Flags are the GPU's caveats in words, each a sentence of its own:
// never used, memory a framework reserved, shared with other jobs.
func (f GPUFacts) Flags() []string {
	var fs []string
	if f.IdleAllocation {
		fs = append(fs, "idle allocation (no process ever used this GPU)")
	}
	if f.Preallocated {
		fs = append(fs, "memory preallocated by the framework (the peak is not the need)")
	}
	if f.Shared {
		fs = append(fs, "shared with other jobs (per-process readings)")
	}
	return fs
}

// String is the facts on one line, as a list of what was measured:
// "util mean 48 %, p95 90 %, idle 3 %; memory peak 61.3 / 80 GiB (77 %);
// energy 12.3 kWh".
func (f GPUFacts) String() string {
	return strings.Join([]string{"util " + f.Util(), "memory " + f.Memory(), "energy " + f.Energy()}, "; ")
}

// ActivityStat writes a GPM metric's mean and p95 (percent, Activity's
// precision) as show and the terminal UI's detail write them: "mean
// 4.5 %, p95 12 %"; "mean 0.02 %" when no p95 is known.
func ActivityStat(mean, p95 float64, p95Known bool) string {
	s := "mean " + Activity(mean) + " %"
	if p95Known {
		s += ", p95 " + Activity(p95) + " %"
	}
	return s
}
