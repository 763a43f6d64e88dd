package profile

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/gpu"
)

// t0 is a whole second so series buckets line up with the hand
// calculations below.
var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

const (
	gib      = uint64(1) << 30
	card     = 80 * gib // an H100's memory
	interval = time.Second
)

func newTestGPU(maxPoints int) GPU {
	return NewGPU(gpu.Device{UUID: "GPU-a", Name: "NVIDIA H100 80GB HBM3", Minor: 3, MemoryTotal: card}, 1, t0, interval, maxPoints)
}

// at is the i-th sampling instant after t0.
func at(i int) time.Time { return t0.Add(time.Duration(i) * interval) }

func utilReading(i int, u uint32) Reading {
	return Reading{Time: at(i), Util: gpu.Some(u)}
}

func approx(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(1, math.Abs(b)) }

func TestNewGPU(t *testing.T) {
	g := newTestGPU(0)
	if g.UUID != "GPU-a" || g.SlurmIndex != 1 || g.Minor != 3 || g.Model != "NVIDIA H100 80GB HBM3" || g.MemoryTotal != card {
		t.Errorf("identity = %q %d %d %q %d, want GPU-a 1 3 H100 %d", g.UUID, g.SlurmIndex, g.Minor, g.Model, g.MemoryTotal, card)
	}
	if len(g.UtilHist) != 101 {
		t.Errorf("len(UtilHist) = %d, want 101", len(g.UtilHist))
	}
	if g.Series.Start != t0.Unix() || g.Series.Step != 1 || g.Series.MaxPoints != DefaultMaxPoints {
		t.Errorf("series = start %d step %d max %d, want %d 1 %d", g.Series.Start, g.Series.Step, g.Series.MaxPoints, t0.Unix(), DefaultMaxPoints)
	}
}

func TestUtilPercentile(t *testing.T) {
	seq := func(from, to uint32) []uint32 {
		var s []uint32
		for v := from; v <= to; v++ {
			s = append(s, v)
		}
		return s
	}
	tests := []struct {
		name   string
		utils  []uint32
		p      float64
		want   uint32
		wantOK bool
	}{
		// Nearest rank: rank = ceil(p/100 · n), value = the rank-th smallest.
		{name: "1..10 p50", utils: seq(1, 10), p: 50, want: 5, wantOK: true},       // rank 5
		{name: "1..10 p95", utils: seq(1, 10), p: 95, want: 10, wantOK: true},      // rank ceil(9.5) = 10
		{name: "1..10 p100", utils: seq(1, 10), p: 100, want: 10, wantOK: true},    // rank 10
		{name: "1..10 p10", utils: seq(1, 10), p: 10, want: 1, wantOK: true},       // rank 1
		{name: "1..10 p11", utils: seq(1, 10), p: 11, want: 2, wantOK: true},       // rank ceil(1.1) = 2
		{name: "1..10 tiny p", utils: seq(1, 10), p: 0.001, want: 1, wantOK: true}, // rank at least 1
		// 0..99: the k-th smallest is k-1. p = 7 is where p/100·n is
		// 7.000000000000001 in floating point: the rank must still be 7.
		{name: "0..99 p7", utils: seq(0, 99), p: 7, want: 6, wantOK: true},
		{name: "0..99 p28", utils: seq(0, 99), p: 28, want: 27, wantOK: true},
		{name: "0..99 p29", utils: seq(0, 99), p: 29, want: 28, wantOK: true},
		{name: "0..99 p99.5", utils: seq(0, 99), p: 99.5, want: 99, wantOK: true}, // rank ceil(99.5) = 100
		{name: "single sample p1", utils: []uint32{42}, p: 1, want: 42, wantOK: true},
		{name: "single sample p100", utils: []uint32{42}, p: 100, want: 42, wantOK: true},
		{name: "all zero p50", utils: []uint32{0, 0, 0, 0}, p: 50, want: 0, wantOK: true},
		{name: "all zero p100", utils: []uint32{0, 0, 0, 0}, p: 100, want: 0, wantOK: true},
		{name: "above 100 clamps", utils: []uint32{150, 300}, p: 50, want: 100, wantOK: true},
		{name: "skewed p50", utils: []uint32{0, 0, 0, 100}, p: 50, want: 0, wantOK: true},   // rank 2
		{name: "skewed p76", utils: []uint32{0, 0, 0, 100}, p: 76, want: 100, wantOK: true}, // rank ceil(3.04) = 4
		{name: "no samples", utils: nil, p: 50, wantOK: false},
		{name: "p zero", utils: seq(1, 10), p: 0, wantOK: false},
		{name: "p negative", utils: seq(1, 10), p: -5, wantOK: false},
		{name: "p above 100", utils: seq(1, 10), p: 100.0001, wantOK: false},
		{name: "p NaN", utils: seq(1, 10), p: math.NaN(), wantOK: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newTestGPU(0)
			for i, u := range tt.utils {
				g.Observe(utilReading(i, u), interval)
			}
			got, ok := g.UtilPercentile(tt.p)
			if ok != tt.wantOK || got != tt.want {
				t.Errorf("UtilPercentile(%v) = %d, %v; want %d, %v", tt.p, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestUtilSummaries(t *testing.T) {
	tests := []struct {
		name     string
		utils    []uint32
		wantMean float64
		wantIdle float64
		wantMax  uint32
		wantOK   bool
	}{
		{name: "1..10", utils: []uint32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, wantMean: 5.5, wantIdle: 0, wantMax: 10, wantOK: true},
		{name: "half idle", utils: []uint32{0, 0, 50, 100}, wantMean: 37.5, wantIdle: 0.5, wantMax: 100, wantOK: true},
		{name: "all idle", utils: []uint32{0, 0, 0}, wantMean: 0, wantIdle: 1, wantMax: 0, wantOK: true},
		// 250 counts as 100: mean (100+0)/2.
		{name: "clamped", utils: []uint32{250, 0}, wantMean: 50, wantIdle: 0.5, wantMax: 100, wantOK: true},
		{name: "no samples", utils: nil, wantOK: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newTestGPU(0)
			for i, u := range tt.utils {
				g.Observe(utilReading(i, u), interval)
			}
			mean, ok := g.UtilMean()
			if ok != tt.wantOK || mean != tt.wantMean {
				t.Errorf("UtilMean() = %v, %v; want %v, %v", mean, ok, tt.wantMean, tt.wantOK)
			}
			idle, ok := g.IdleFraction()
			if ok != tt.wantOK || idle != tt.wantIdle {
				t.Errorf("IdleFraction() = %v, %v; want %v, %v", idle, ok, tt.wantIdle, tt.wantOK)
			}
			if g.UtilMax != tt.wantMax {
				t.Errorf("UtilMax = %d, want %d", g.UtilMax, tt.wantMax)
			}
		})
	}
}

func TestObserveHistogram(t *testing.T) {
	g := newTestGPU(0)
	for i, u := range []uint32{0, 0, 37, 37, 37, 100, 101, 4000000000} {
		g.Observe(utilReading(i, u), interval)
	}
	want := make([]uint32, 101)
	want[0], want[37], want[100] = 2, 3, 3
	if !reflect.DeepEqual(g.UtilHist, want) {
		t.Errorf("UtilHist = %v, want %v", g.UtilHist, want)
	}
	if g.Samples != 8 || g.IdleSamples != 2 || g.UtilSum != 0+0+3*37+3*100 || g.UtilMax != 100 {
		t.Errorf("samples %d idle %d sum %d max %d, want 8 2 411 100", g.Samples, g.IdleSamples, g.UtilSum, g.UtilMax)
	}
}

func TestObserveRepairsHistogram(t *testing.T) {
	// A profile decoded from a store that dropped the histogram must not
	// panic; it starts counting afresh.
	g := newTestGPU(0)
	g.UtilHist = nil
	g.Observe(utilReading(0, 5), interval)
	if len(g.UtilHist) != 101 || g.UtilHist[5] != 1 {
		t.Errorf("UtilHist len %d, [5] = %d; want 101, 1", len(g.UtilHist), g.UtilHist[5])
	}
}

func TestObserve(t *testing.T) {
	g := newTestGPU(0)
	readings := []Reading{
		{Time: at(0), MemUsed: gpu.Some(uint64(3)), Util: gpu.Some[uint32](10), TempC: gpu.Some[uint32](40), Processes: 1},
		{Time: at(1), MemUsed: gpu.Some(7*gib + 1), Util: gpu.Some[uint32](20), TempC: gpu.Some[uint32](71), Processes: 2},
		// Invalid readings carry values a careless backend might leave in
		// place; none of them may count.
		{Time: at(2), MemUsed: gpu.Opt[uint64]{Value: 79 * gib}, Util: gpu.Opt[uint32]{Value: 99}, TempC: gpu.Opt[uint32]{Value: 99}},
		{Time: at(3), MemUsed: gpu.Some(5 * gib), Util: gpu.Some[uint32](0), Shared: true},
		{Time: at(4), MemUsed: gpu.Some(uint64(0)), Util: gpu.Some[uint32](0), TempC: gpu.Some[uint32](50), Processes: 1},
	}
	for _, r := range readings {
		g.Observe(r, interval)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"MemPeak", g.MemPeak, 7*gib + 1},
		{"MemSamples", g.MemSamples, 4},
		{"Samples", g.Samples, 4},
		{"UtilSum", g.UtilSum, uint64(30)},
		{"UtilMax", g.UtilMax, uint32(20)},
		{"IdleSamples", g.IdleSamples, 2},
		{"UtilHist[99]", g.UtilHist[99], uint32(0)},
		{"ProcSamples", g.ProcSamples, 3},
		{"Shared", g.Shared, true}, // stays set once seen
		{"MaxTempC", g.MaxTempC, uint32(71)},
		{"TempValid", g.TempValid, true},
		{"FirstSample", g.FirstSample, at(0)},
		{"LastSample", g.LastSample, at(4)},
		{"MemActive", g.MemActive, 4},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

func TestObserveOnlyInvalid(t *testing.T) {
	g := newTestGPU(0)
	g.Observe(Reading{Time: at(0)}, interval)
	if g.Samples != 0 || g.MemSamples != 0 || g.TempValid || g.EnergyValid || g.MemPeak != 0 {
		t.Errorf("samples %d mem %d temp %v energy %v peak %d, want nothing counted",
			g.Samples, g.MemSamples, g.TempValid, g.EnergyValid, g.MemPeak)
	}
	if _, ok := g.UtilMean(); ok {
		t.Error("UtilMean ok with no utilisation reading")
	}
}

func TestEnergy(t *testing.T) {
	type obs struct {
		i       int     // sampling instant (seconds after t0)
		sub     float64 // extra seconds, for readings off the whole second
		energy  int64   // mJ counter; -1: not available
		powerMW int64   // -1: not available
		shared  bool
	}
	tests := []struct {
		name      string
		maxPoints int
		obs       []obs
		wantJ     float64
		wantValid bool
	}{
		{
			name:      "counter first reading gives 0",
			obs:       []obs{{i: 0, energy: 5_000_000, powerMW: 300_000}},
			wantJ:     0,
			wantValid: true,
		},
		{
			name: "counter deltas",
			obs: []obs{
				{i: 0, energy: 1_000_000, powerMW: -1},
				{i: 1, energy: 1_250_000, powerMW: -1}, // +250 J
				{i: 2, energy: 1_500_500, powerMW: -1}, // +250.5 J
			},
			wantJ:     500.5,
			wantValid: true,
		},
		{
			name: "counter covers a sampling gap",
			obs: []obs{
				{i: 0, energy: 1_000_000, powerMW: -1},
				{i: 1, energy: 1_250_000, powerMW: -1},  // +250 J
				{i: 60, energy: 9_250_000, powerMW: -1}, // +8000 J over 59 s, all of it
			},
			wantJ:     8250,
			wantValid: true,
		},
		{
			name: "counter reset ignored",
			obs: []obs{
				{i: 0, energy: 5_000_000, powerMW: -1},
				{i: 1, energy: 6_000_000, powerMW: -1}, // +1000 J
				{i: 2, energy: 100_000, powerMW: -1},   // driver reloaded: no delta
				{i: 3, energy: 400_000, powerMW: -1},   // +300 J from the new base
			},
			wantJ:     1300,
			wantValid: true,
		},
		{
			name: "counter preferred over power",
			obs: []obs{
				{i: 0, energy: 0, powerMW: 999_000},
				{i: 1, energy: 100_000, powerMW: 999_000}, // +100 J, power ignored
				{i: 2, energy: -1, powerMW: 999_000},      // counter missing once: the next delta covers it
				{i: 3, energy: 300_000, powerMW: 999_000}, // +200 J
			},
			wantJ:     300,
			wantValid: true,
		},
		{
			name: "power integral",
			obs: []obs{
				{i: 0, energy: -1, powerMW: 200_000}, // first reading: no interval yet
				{i: 1, energy: -1, powerMW: 200_000}, // 200 W × 1 s
				{i: 2, energy: -1, powerMW: 300_000}, // 300 W × 1 s
			},
			wantJ:     500,
			wantValid: true,
		},
		{
			// Readings half a second off the series' whole-second buckets:
			// the interval is the time between readings, not since a bucket
			// start (which would give 1.5 s for the second reading).
			name: "power integral off the second",
			obs: []obs{
				{i: 0, sub: 0.5, energy: -1, powerMW: 200_000},
				{i: 1, sub: 0.5, energy: -1, powerMW: 200_000}, // 200 J
				{i: 2, sub: 0.5, energy: -1, powerMW: 200_000}, // 200 J
			},
			wantJ:     400,
			wantValid: true,
		},
		{
			name: "power gap capped at two intervals",
			obs: []obs{
				{i: 0, energy: -1, powerMW: 100_000},
				{i: 1, energy: -1, powerMW: 100_000},  // 100 J
				{i: 31, energy: -1, powerMW: 100_000}, // 30 s gap counts as 2 s: 200 J
			},
			wantJ:     300,
			wantValid: true,
		},
		{
			name: "power reading after one without power",
			obs: []obs{
				{i: 0, energy: -1, powerMW: 100_000},
				{i: 1, energy: -1, powerMW: -1},      // nothing to integrate
				{i: 2, energy: -1, powerMW: 100_000}, // 1 s since the previous reading
			},
			wantJ:     100,
			wantValid: true,
		},
		{
			name: "clock step backwards adds nothing",
			obs: []obs{
				{i: 10, energy: -1, powerMW: 100_000},
				{i: 5, energy: -1, powerMW: 100_000}, // before the previous reading: 0 J
				{i: 6, energy: -1, powerMW: 100_000}, // 1 s after the previous one: 100 J
				{i: 6, energy: -1, powerMW: 100_000}, // same instant: 0 J
			},
			wantJ:     100,
			wantValid: true,
		},
		{
			name: "no energy or power",
			obs: []obs{
				{i: 0, energy: -1, powerMW: -1},
				{i: 1, energy: -1, powerMW: -1},
			},
			wantJ:     0,
			wantValid: false,
		},
		{
			name: "shared GPU has no energy",
			obs: []obs{
				{i: 0, energy: 1_000_000, powerMW: -1},
				{i: 1, energy: 2_000_000, powerMW: -1},
				{i: 2, energy: 3_000_000, powerMW: -1, shared: true},
				{i: 3, energy: 4_000_000, powerMW: -1}, // alone again: still not attributable
			},
			wantJ:     1000, // accumulated before sharing, but marked invalid
			wantValid: false,
		},
		{
			name:      "shared from the start",
			obs:       []obs{{i: 0, powerMW: 100_000, energy: -1, shared: true}, {i: 1, powerMW: 100_000, energy: -1}},
			wantJ:     0,
			wantValid: false,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newTestGPU(tt.maxPoints)
			for _, o := range tt.obs {
				r := Reading{
					Time:   at(o.i).Add(time.Duration(o.sub * float64(time.Second))),
					Util:   gpu.Some[uint32](50),
					Shared: o.shared,
				}
				if o.energy >= 0 {
					r.EnergyMJ = gpu.Some(uint64(o.energy))
				}
				if o.powerMW >= 0 {
					r.PowerMW = gpu.Some(uint32(o.powerMW))
				}
				g.Observe(r, interval)
			}
			if !approx(g.EnergyJ, tt.wantJ) || g.EnergyValid != tt.wantValid {
				t.Errorf("energy = %v J (valid %v), want %v J (valid %v)", g.EnergyJ, g.EnergyValid, tt.wantJ, tt.wantValid)
			}
		})
	}
}

func TestEnergyPowerAcrossSeriesCoarsening(t *testing.T) {
	// Once the series has coarsened, its buckets are many seconds wide; the
	// integral must still use one interval per reading: 99 intervals of 1 s
	// at 100 W after the first reading.
	g := newTestGPU(16)
	for i := range 100 {
		g.Observe(Reading{Time: at(i), PowerMW: gpu.Some[uint32](100_000)}, interval)
	}
	if g.Series.Step <= 1 {
		t.Fatalf("series step = %d, want coarsened (> 1)", g.Series.Step)
	}
	if want := 9900.0; !approx(g.EnergyJ, want) {
		t.Errorf("energy = %v J, want %v J", g.EnergyJ, want)
	}
}

// memOpt returns a valid memory reading of gb GiB, or an invalid one for a
// negative gb.
func memOpt(gb float64) gpu.Opt[uint64] {
	if gb < 0 {
		return gpu.Opt[uint64]{}
	}
	return gpu.Some(uint64(gb * float64(gib)))
}

func TestPreallocated(t *testing.T) {
	// Card of 80 GiB: "high" is ≥ 72 GiB (90 %), "flat" is within 1.6 GiB
	// (2 %) of the peak. -1 is a reading without memory.
	tests := []struct {
		name          string
		total         uint64
		mem           []float64
		wantEarlyHigh bool
		want          bool
	}{
		{name: "high from the first sample", total: card, mem: []float64{76, 76, 76.5, 76}, wantEarlyHigh: true, want: true},
		{name: "zero before the program starts", total: card, mem: []float64{0, 0, 0, 1, 76, 76, 76}, wantEarlyHigh: true, want: true},
		{name: "high at the third active sample", total: card, mem: []float64{0, 10, 40, 73, 73}, wantEarlyHigh: true, want: true},
		{name: "exactly 90 percent", total: card, mem: []float64{72, 72}, wantEarlyHigh: true, want: true},
		{name: "program exits at the end", total: card, mem: []float64{0, 0, 76, 76, 76, 0}, wantEarlyHigh: true, want: true},
		{name: "invalid readings do not count as samples", total: card, mem: []float64{0, 10, -1, -1, 20, 74, 74}, wantEarlyHigh: true, want: true},
		{name: "within 2 percent", total: card, mem: []float64{76, 75, 76}, wantEarlyHigh: true, want: true},
		{name: "high at the fourth active sample", total: card, mem: []float64{0, 10, 20, 40, 73, 73}, wantEarlyHigh: false, want: false},
		{name: "slow growth", total: card, mem: []float64{8, 16, 24, 32, 40, 48, 56, 64, 72, 80}, wantEarlyHigh: false, want: false},
		{name: "high then varying", total: card, mem: []float64{76, 76, 74, 76}, wantEarlyHigh: true, want: false},      // 2 GiB > 1.6 GiB
		{name: "peak before the high point", total: card, mem: []float64{79, 76, 76}, wantEarlyHigh: true, want: false}, // 79-76 = 3 GiB
		{name: "never high", total: card, mem: []float64{0, 30, 30, 30}, wantEarlyHigh: false, want: false},
		{name: "no memory used", total: card, mem: []float64{0, 0, 0}, wantEarlyHigh: false, want: false},
		{name: "card size unknown", total: 0, mem: []float64{76, 76, 76}, wantEarlyHigh: false, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewGPU(gpu.Device{UUID: "GPU-a", MemoryTotal: tt.total}, 0, t0, interval, 0)
			for i, m := range tt.mem {
				g.Observe(Reading{Time: at(i), MemUsed: memOpt(m), Util: gpu.Some[uint32](50), Processes: 1}, interval)
			}
			j := Job{Start: t0, SampleInterval: interval, GPUs: []GPU{g}}
			j.Finish(at(len(tt.mem)))
			got := j.GPUs[0]
			if got.EarlyHigh != tt.wantEarlyHigh || got.Preallocated != tt.want {
				t.Errorf("EarlyHigh, Preallocated = %v, %v; want %v, %v (peak %d, min after high %d)",
					got.EarlyHigh, got.Preallocated, tt.wantEarlyHigh, tt.want, got.MemPeak, got.MemMinAfterHigh)
			}
		})
	}
}

func TestIdleAllocation(t *testing.T) {
	tests := []struct {
		name        string
		utils       []uint32 // one reading per interval from t0
		processes   int      // the job's processes seen in every reading
		interval    time.Duration
		end         time.Duration // after t0
		want        bool
		wantPartial bool
	}{
		{name: "idle over five intervals", utils: []uint32{0, 0, 0, 0, 0}, interval: interval, end: 5 * time.Second, want: true},
		{name: "idle over exactly three intervals", utils: []uint32{0, 0, 0}, interval: interval, end: 3 * time.Second, want: true},
		{name: "shorter than three intervals", utils: []uint32{0, 0}, interval: interval, end: 2 * time.Second, want: false, wantPartial: true},
		{name: "a process on the GPU", utils: []uint32{0, 0, 0, 0, 0}, processes: 1, interval: interval, end: 5 * time.Second, want: false},
		{name: "utilisation without a visible process", utils: []uint32{0, 0, 3, 0, 0}, interval: interval, end: 5 * time.Second, want: false},
		{name: "no readings at all", utils: nil, interval: interval, end: 5 * time.Second, want: false},
		{name: "interval unknown", utils: []uint32{0}, interval: 0, end: time.Second, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newTestGPU(0)
			for i, u := range tt.utils {
				g.Observe(Reading{Time: at(i), Util: gpu.Some(u), MemUsed: gpu.Some(uint64(0)), Processes: tt.processes}, interval)
			}
			j := Job{Start: t0, SampleInterval: tt.interval, GPUs: []GPU{g}}
			j.Finish(t0.Add(tt.end))
			if got := j.GPUs[0].IdleAllocation; got != tt.want {
				t.Errorf("IdleAllocation = %v, want %v", got, tt.want)
			}
			if j.Partial != tt.wantPartial {
				t.Errorf("Partial = %v (%q), want %v", j.Partial, j.PartialReasons, tt.wantPartial)
			}
			if tt.wantPartial {
				want := []string{"job shorter than 3s: sampling may have missed its work"}
				if !reflect.DeepEqual(j.PartialReasons, want) {
					t.Errorf("PartialReasons = %q, want %q", j.PartialReasons, want)
				}
			}
		})
	}
}

func TestAddXID(t *testing.T) {
	g := newTestGPU(0)
	for i := range MaxXIDs + 10 {
		g.AddXID(uint64(i), at(i))
	}
	if g.XIDCount != MaxXIDs+10 || len(g.XIDs) != MaxXIDs {
		t.Errorf("XIDCount %d, len(XIDs) %d; want %d, %d", g.XIDCount, len(g.XIDs), MaxXIDs+10, MaxXIDs)
	}
	if g.XIDs[0] != (XID{Code: 0, Time: at(0)}) || g.XIDs[MaxXIDs-1].Code != MaxXIDs-1 {
		t.Errorf("XIDs kept = first %v last %v, want the earliest %d", g.XIDs[0], g.XIDs[MaxXIDs-1], MaxXIDs)
	}
}

func TestAddProcessName(t *testing.T) {
	g := newTestGPU(0)
	for _, n := range []string{"python", "", "python", "torchrun"} {
		g.AddProcessName(n)
	}
	if want := []string{"python", "torchrun"}; !reflect.DeepEqual(g.Processes, want) {
		t.Errorf("Processes = %q, want %q", g.Processes, want)
	}
	for i := range 2 * MaxProcessNames {
		g.AddProcessName(string(rune('a'+i%26)) + string(rune('a'+i/26)))
	}
	if len(g.Processes) != MaxProcessNames {
		t.Errorf("len(Processes) = %d, want %d", len(g.Processes), MaxProcessNames)
	}
}

func TestGPUResumesFromJSON(t *testing.T) {
	// The store persists a running profile as JSON and a restarted agent
	// continues from it: the result must equal an uninterrupted profile.
	readings := make([]Reading, 40)
	for i := range readings {
		readings[i] = Reading{
			Time:      at(i),
			MemUsed:   gpu.Some(uint64(i) * gib),
			Util:      gpu.Some(uint32(i * 3)),
			PowerMW:   gpu.Some(uint32(100_000 + i)),
			TempC:     gpu.Some(uint32(40 + i%7)),
			Processes: i % 2,
		}
	}
	whole := newTestGPU(16)
	for _, r := range readings {
		whole.Observe(r, interval)
	}

	resumed := newTestGPU(16)
	for _, r := range readings[:25] {
		resumed.Observe(r, interval)
	}
	data, err := json.Marshal(resumed)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	var back GPU
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatalf("unmarshal: %v", err)
	}
	for _, r := range readings[25:] {
		back.Observe(r, interval)
	}
	if !reflect.DeepEqual(back, whole) {
		t.Errorf("resumed profile differs from uninterrupted one:\n got %+v\nwant %+v", back, whole)
	}
}

func BenchmarkObserve(b *testing.B) {
	g := newTestGPU(DefaultMaxPoints)
	// Fill the series to its bound so every benchmark reading can trigger
	// the coarsening path, as in a long job.
	i := 0
	for ; len(g.Series.Points) < DefaultMaxPoints; i++ {
		g.Observe(utilReading(i, uint32(i%101)), interval)
	}
	r := Reading{
		MemUsed:   gpu.Some(40 * gib),
		Util:      gpu.Some[uint32](73),
		PowerMW:   gpu.Some[uint32](350_000),
		EnergyMJ:  gpu.Some[uint64](1_000_000),
		TempC:     gpu.Some[uint32](65),
		Processes: 1,
	}
	b.ReportAllocs()
	for b.Loop() {
		r.Time = at(i)
		r.EnergyMJ.Value += 350_000
		g.Observe(r, interval)
		i++
	}
}
