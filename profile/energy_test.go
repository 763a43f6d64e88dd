package profile

import (
	"math"
	"testing"

	"github.com/gpuprof/gpuprof/gpu"
)

// driftingGPU is a GPU whose power readings drift from the energy it
// really uses, in the two ways real boards do: the reading is an instant
// (or a short average) of a power that changes within the sampling
// interval, and its sensor reads gain × the true power. The energy counter
// is exact: the integral of the true power.
type driftingGPU struct {
	gain  float64                 // reading / true power
	power func(s float64) float64 // true power at second s, watts
}

// energyJ is the true energy from second a to second b, in 1 ms steps.
func (d driftingGPU) energyJ(a, b float64) float64 {
	e := 0.0
	for t := a; t < b; t += 0.001 {
		e += d.power(t) * 0.001
	}
	return e
}

// reading is the power reading at second s, milliwatts.
func (d driftingGPU) reading(s float64) uint32 { return uint32(d.gain * d.power(s) * 1000) }

// job runs a job of secs seconds at 1 s sampling on d, reading the counter
// at the job's start and end and every counterEvery seconds (0: never), and
// returns its profile's energy, the counter's, and the largest error seen
// during the job against the counter at that instant, in joules.
func (d driftingGPU) job(secs, counterEvery int) (got, want, worstMid float64) {
	const baseMJ = 7_000_000_000 // the counter counts since the driver loaded
	g := newTestGPU(1024)
	truth := 0.0
	for i := 0; i <= secs; i++ {
		if i > 0 {
			truth += d.energyJ(float64(i-1), float64(i))
		}
		r := Reading{Time: at(i), PowerMW: gpu.Some(d.reading(float64(i)))}
		if counterEvery > 0 && (i == 0 || i == secs || i%counterEvery == 0) {
			r.EnergyMJ = gpu.Some(baseMJ + uint64(math.Round(truth*1000)))
		}
		g.Observe(r, interval)
		worstMid = max(worstMid, math.Abs(g.EnergyJ-truth))
	}
	return g.EnergyJ, truth, worstMid
}

// TestEnergyAgainstDriftingCounter: with the counter read at the job's
// start, its end and once a minute, the job's energy is the counter's; in
// between, the error is that of power integration over at most a minute.
// Power alone is off by the sensor's drift.
func TestEnergyAgainstDriftingCounter(t *testing.T) {
	// A training step: 8.3 s at 650 W, 3.1 s of data loading at 180 W.
	// The period is no multiple of the interval, so the 1 s samples
	// misjudge each step's shape.
	steps := func(s float64) float64 {
		if math.Mod(s, 11.4) < 8.3 {
			return 650
		}
		return 180
	}
	const peakW = 650
	tests := []struct {
		name  string
		gpu   driftingGPU
		every int
		// bounds on the relative error of the job's energy, and on the
		// error at any instant during it as a share of a minute at peak
		// power (what power integration can get wrong since the last
		// counter reading)
		maxEnd, maxMid float64
		// the uncorrected integral's error, at least
		minEnd float64
	}{
		{name: "sensor 3 % high, counter every minute", gpu: driftingGPU{gain: 1.03, power: steps}, every: 60, maxEnd: 1e-6, maxMid: 0.03 + 0.02},
		{name: "sensor 5 % low, counter every minute", gpu: driftingGPU{gain: 0.95, power: steps}, every: 60, maxEnd: 1e-6, maxMid: 0.05 + 0.02},
		{name: "exact sensor, shape missed, counter every minute", gpu: driftingGPU{gain: 1, power: steps}, every: 60, maxEnd: 1e-6, maxMid: 0.02},
		{name: "sensor 3 % high, no counter", gpu: driftingGPU{gain: 1.03, power: steps}, every: 0, maxEnd: 0.05, maxMid: 1e9, minEnd: 0.02},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, want, mid := tt.gpu.job(3600, tt.every)
			rel := math.Abs(got-want) / want
			t.Logf("job %.0f J, counter %.0f J (%.5f %% off); worst during the job %.0f J off (%.2f %% of a minute at peak)", got, want, 100*rel, mid, 100*mid/(60*peakW))
			if rel > tt.maxEnd || rel < tt.minEnd {
				t.Errorf("job energy %.1f J against the counter's %.1f J: %.4f %% off, want %g–%g %%", got, want, 100*rel, 100*tt.minEnd, 100*tt.maxEnd)
			}
			if share := mid / (60 * peakW); share > tt.maxMid {
				t.Errorf("during the job up to %.0f J off the counter, %.2f %% of a minute at peak, want ≤ %g %%", mid, 100*share, 100*tt.maxMid)
			}
		})
	}
}

// TestEnergyCounterMissedAtEnd: a counter reading that fails at the job's
// end leaves the time since the last one integrated from power, a minute at
// most (docs/real-gpu.md, the error bound).
func TestEnergyCounterMissedAtEnd(t *testing.T) {
	d := driftingGPU{gain: 1.05, power: func(float64) float64 { return 400 }}
	g := newTestGPU(1024)
	for i := 0; i <= 90; i++ {
		r := Reading{Time: at(i), PowerMW: gpu.Some(d.reading(float64(i)))}
		if i == 0 || i == 60 { // the end's (90) failed
			r.EnergyMJ = gpu.Some(uint64(5_000_000 + i*400_000))
		}
		g.Observe(r, interval)
	}
	// 60 s from the counter (24 kJ), 30 s at the drifted 420 W (12.6 kJ).
	want := 60*400.0 + 30*420
	if !approx(g.EnergyJ, want) {
		t.Errorf("energy %.3f J, want %.3f J", g.EnergyJ, want)
	}
	if !approx(g.EnergySinceCounterJ, 30*420) {
		t.Errorf("integrated since the counter %.3f J, want %.3f J", g.EnergySinceCounterJ, 30.0*420)
	}
}

// TestEnergyCounterTakesOverLate: a job whose counter is first read after
// its start keeps the power integral up to then.
func TestEnergyCounterTakesOverLate(t *testing.T) {
	g := newTestGPU(1024)
	for i := 0; i <= 20; i++ {
		r := Reading{Time: at(i), PowerMW: gpu.Some[uint32](100_000)}
		switch i {
		case 10:
			r.EnergyMJ = gpu.Some[uint64](5_000_000)
		case 20:
			r.EnergyMJ = gpu.Some[uint64](5_000_000 + 1_500_000) // 150 W really
		}
		g.Observe(r, interval)
	}
	if want := 10*100.0 + 1500; !approx(g.EnergyJ, want) {
		t.Errorf("energy %v J, want %v J (1 kJ integrated, then 1.5 kJ from the counter)", g.EnergyJ, want)
	}
}
