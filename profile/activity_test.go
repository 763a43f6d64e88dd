package profile

import (
	"encoding/json"
	"math"
	"slices"
	"sort"
	"testing"

	"github.com/gpuprof/gpuprof/gpu"
)

func TestActivityBin(t *testing.T) {
	tests := []struct {
		in, want float64
	}{
		{0, 0}, {0.004, 0}, {0.006, 0.01}, {0.02, 0.02}, {0.03, 0.02}, {0.04, 0.05},
		{0.3, 0.2}, {0.4, 0.5}, {0.7, 0.5}, {0.71, 1}, {1, 1}, {1.49, 1}, {1.5, 2},
		{13.7, 14}, {92.4, 92}, {92.5, 93}, {99.6, 100}, {100, 100},
	}
	for _, tt := range tests {
		if got := ActivityLevels[activityBin(tt.in)]; got != tt.want {
			t.Errorf("bin of %g %% = level %g, want %g", tt.in, got, tt.want)
		}
	}
}

func activityReading(i int, sm, tensor, dram float64) Reading {
	return Reading{Time: at(i), Util: gpu.Some[uint32](16),
		Activity: gpu.Some(gpu.Activity{Interval: interval, SM: gpu.Some(sm), Tensor: gpu.Some(tensor), DRAM: gpu.Some(dram)})}
}

func TestObserveActivity(t *testing.T) {
	t.Run("tiny kernels: busy by the duty cycle, idle SMs", func(t *testing.T) {
		g := newTestGPU(1024)
		g.Observe(Reading{Time: at(0), Util: gpu.Some[uint32](16)}, interval) // first: no interval yet
		for i := 1; i <= 100; i++ {
			g.Observe(activityReading(i, 0.02, 0, 0.01), interval)
		}
		a := g.Activity
		if a == nil {
			t.Fatal("no activity recorded")
		}
		if a.Scope != ActivityScopeGPU || a.Seconds != 100 || a.SM.N != 100 {
			t.Errorf("scope %q, %g s, %d SM readings; want gpu, 100 s, 100", a.Scope, a.Seconds, a.SM.N)
		}
		if m, ok := a.SM.Mean(); !ok || !approx(m, 0.02) {
			t.Errorf("SM mean = %v, %v; want 0.02", m, ok)
		}
		if p, ok := a.SM.Percentile(95); !ok || p != 0.02 {
			t.Errorf("SM p95 = %v, %v; want 0.02", p, ok)
		}
		if m, _ := g.UtilMean(); m != 16 {
			t.Errorf("duty cycle mean = %v, want 16 beside the activity", m)
		}
		if _, ok := a.SMOccupancy.Mean(); ok {
			t.Error("occupancy has a mean though no reading gave one")
		}
		if _, ok := a.SMOccupancy.Percentile(50); ok {
			t.Error("occupancy has a percentile: no histogram is kept for it")
		}
	})
	t.Run("matmul percentiles", func(t *testing.T) {
		g := newTestGPU(1024)
		// 90 readings at 92.4 %, 10 at 40 %: p95 in the busy part, p50 too.
		for i := range 100 {
			sm := 92.4
			if i%10 == 0 {
				sm = 40
			}
			g.Observe(activityReading(i, sm, 89.7, 15.7), interval)
		}
		a := g.Activity
		if p, _ := a.SM.Percentile(95); p != 92 {
			t.Errorf("SM p95 = %v, want 92 (the level of 92.4)", p)
		}
		if p, _ := a.SM.Percentile(5); p != 40 {
			t.Errorf("SM p5 = %v, want 40", p)
		}
		if m, _ := a.SM.Mean(); !approx(m, 0.9*92.4+0.1*40) {
			t.Errorf("SM mean = %v, want the exact mean %v", m, 0.9*92.4+0.1*40)
		}
		if p, _ := a.DRAM.Percentile(95); p != 16 {
			t.Errorf("DRAM p95 = %v, want 16", p)
		}
		if a.Tensor.Max != 89.7 {
			t.Errorf("tensor max = %v, want 89.7", a.Tensor.Max)
		}
	})
	t.Run("unknown is not 0", func(t *testing.T) {
		g := newTestGPU(1024)
		for i := range 10 {
			g.Observe(utilReading(i, 50), interval)
		}
		if g.Activity != nil {
			t.Errorf("activity %+v on a GPU without GPM readings, want nil", g.Activity)
		}
		for _, p := range g.Series.Points {
			if _, ok := p.SMMean(); ok {
				t.Errorf("series point %+v has SM activity", p)
			}
		}
	})
	t.Run("scope: MIG instance", func(t *testing.T) {
		g := newTestGPU(1024)
		r := activityReading(1, 30, 0, 5)
		r.ActivityScope = ActivityScopeMIG
		g.Observe(r, interval)
		if g.Activity.Scope != ActivityScopeMIG {
			t.Errorf("scope %q, want mig", g.Activity.Scope)
		}
	})
	t.Run("scope: shared once, shared for good", func(t *testing.T) {
		g := newTestGPU(1024)
		g.Observe(activityReading(1, 30, 0, 5), interval)
		r := activityReading(2, 60, 0, 5)
		r.Shared = true
		g.Observe(r, interval)
		g.Observe(activityReading(3, 30, 0, 5), interval)
		if !g.Activity.Shared() || g.Activity.Scope != ActivityScopeSharedGPU {
			t.Errorf("scope %q, want shared_gpu: the device's activity included other jobs'", g.Activity.Scope)
		}
	})
}

func TestSeriesActivity(t *testing.T) {
	g := newTestGPU(4)
	for i := range 8 {
		g.Observe(activityReading(i, float64(10*i), 1, 0), interval)
	}
	// 8 one-second readings on 4 points: buckets of 2 s.
	if g.Series.Step != 2 || len(g.Series.Points) != 4 {
		t.Fatalf("step %d, %d points; want 2 and 4", g.Series.Step, len(g.Series.Points))
	}
	for k, p := range g.Series.Points {
		want := float64(10*(2*k)+10*(2*k+1)) / 2
		if m, ok := p.SMMean(); !ok || !approx(m, want) {
			t.Errorf("point %d: SM mean %v, %v; want %v", k, m, ok, want)
		}
		if m, ok := p.TensorMean(); !ok || m != 1 {
			t.Errorf("point %d: tensor mean %v, %v; want 1", k, m, ok)
		}
	}
}

// TestActivityJSON: a profile stored before gpuprof read GPM (no
// "activity", series points without sm_n) decodes as unknown; one with
// activity survives a round trip.
func TestActivityJSON(t *testing.T) {
	var old GPU
	if err := json.Unmarshal([]byte(`{"uuid":"GPU-a","samples":3,"series":{"start":1,"step":1,"max_points":8,"points":[{"t":1,"n":1,"u_sum":50,"u_max":50,"mem_max":0}]}}`), &old); err != nil {
		t.Fatal(err)
	}
	if old.Activity != nil {
		t.Errorf("old profile decodes with activity %+v", old.Activity)
	}
	if _, ok := old.Series.Points[0].SMMean(); ok {
		t.Error("old series point decodes with SM activity")
	}
	g := newTestGPU(16)
	g.Observe(activityReading(0, 0.02, 0, 0), interval)
	data, err := json.Marshal(&g)
	if err != nil {
		t.Fatal(err)
	}
	var back GPU
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if p, ok := back.Activity.SM.Percentile(50); !ok || p != 0.02 {
		t.Errorf("after a round trip SM p50 = %v, %v; want 0.02", p, ok)
	}
}

// TestActivityLevelsLadder: the literal ActivityLevels is the ladder its
// comment describes, built as it was built at start before issue #41, and
// activityBin bins every value as the table of boundaries built then did.
func TestActivityLevelsLadder(t *testing.T) {
	want := []float64{0, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5}
	for p := 1; p <= 100; p++ {
		want = append(want, float64(p))
	}
	if !slices.Equal(ActivityLevels, want) {
		t.Fatalf("ActivityLevels = %v,\nwant %v", ActivityLevels, want)
	}
	bounds := make([]float64, len(want)-1)
	for i := range bounds {
		lo, hi := want[i], want[i+1]
		switch {
		case lo == 0:
			bounds[i] = hi / 2
		case hi <= 1:
			bounds[i] = math.Sqrt(lo * hi)
		default:
			bounds[i] = (lo + hi) / 2
		}
	}
	values := slices.Clone(bounds)
	for _, b := range bounds {
		values = append(values, math.Nextafter(b, -1), math.Nextafter(b, 200))
	}
	for v := 0.0; v <= 100; v += 0.001 {
		values = append(values, v)
	}
	for _, v := range values {
		old := sort.Search(len(bounds), func(i int) bool { return bounds[i] > v })
		if got := activityBin(v); got != old {
			t.Fatalf("activityBin(%v) = %d, want %d", v, got, old)
		}
	}
}
