package profile

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/gpu"
)

var noUtil gpu.Opt[uint32]

func TestNewSeries(t *testing.T) {
	tests := []struct {
		name          string
		interval      time.Duration
		maxPoints     int
		wantStep      int64
		wantMaxPoints int
	}{
		{name: "ten seconds", interval: 10 * time.Second, maxPoints: 100, wantStep: 10, wantMaxPoints: 100},
		{name: "sub-second interval", interval: 250 * time.Millisecond, maxPoints: 100, wantStep: 1, wantMaxPoints: 100},
		{name: "zero interval", interval: 0, maxPoints: 100, wantStep: 1, wantMaxPoints: 100},
		{name: "max points unset", interval: time.Second, maxPoints: 0, wantStep: 1, wantMaxPoints: DefaultMaxPoints},
		{name: "max points one", interval: time.Second, maxPoints: 1, wantStep: 1, wantMaxPoints: DefaultMaxPoints},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewSeries(t0.Add(300*time.Millisecond), tt.interval, tt.maxPoints)
			if s.Start != t0.Unix() || s.Step != tt.wantStep || s.MaxPoints != tt.wantMaxPoints || len(s.Points) != 0 {
				t.Errorf("NewSeries = %+v, want start %d step %d max %d, no points", s, t0.Unix(), tt.wantStep, tt.wantMaxPoints)
			}
		})
	}
}

func TestSeriesBuckets(t *testing.T) {
	s := NewSeries(t0, 10*time.Second, 100)
	add := func(sec int, util int, memGiB uint64) {
		u := noUtil
		if util >= 0 {
			u = gpu.Some(uint32(util))
		}
		s.Add(t0.Add(time.Duration(sec)*time.Second), u, gpu.Some(memGiB*gib))
	}
	add(0, 10, 1)
	add(5, 30, 4) // same 10 s bucket
	add(9, -1, 2) // no utilisation: memory only
	add(10, 150, 3)
	add(25, 0, 0) // the [20,30) bucket
	// nothing in [30,40): no empty point is made
	add(47, 50, 9)
	s0 := t0.Unix()
	want := []Point{
		{T: s0, N: 2, UtilSum: 40, UtilMax: 30, MemMax: 4 * gib},
		{T: s0 + 10, N: 1, UtilSum: 100, UtilMax: 100, MemMax: 3 * gib}, // 150 % clamps to 100
		{T: s0 + 20, N: 1, UtilSum: 0, UtilMax: 0, MemMax: 0},
		{T: s0 + 40, N: 1, UtilSum: 50, UtilMax: 50, MemMax: 9 * gib},
	}
	if !reflect.DeepEqual(s.Points, want) {
		t.Errorf("Points =\n%+v\nwant\n%+v", s.Points, want)
	}
	if s.Step != 10 {
		t.Errorf("Step = %d, want 10 (no coarsening)", s.Step)
	}
}

func TestSeriesBeforeStart(t *testing.T) {
	s := NewSeries(t0, time.Second, 100)
	s.Add(t0.Add(-time.Hour), gpu.Some[uint32](20), gpu.Opt[uint64]{})
	s.Add(t0, gpu.Some[uint32](40), gpu.Opt[uint64]{})
	want := []Point{{T: t0.Unix(), N: 2, UtilSum: 60, UtilMax: 40}}
	if !reflect.DeepEqual(s.Points, want) {
		t.Errorf("Points = %+v, want %+v", s.Points, want)
	}
}

func TestSeriesClockBackwards(t *testing.T) {
	s := NewSeries(t0, time.Second, 100)
	s.Add(t0.Add(30*time.Second), gpu.Some[uint32](20), gpu.Some(uint64(5)))
	s.Add(t0.Add(10*time.Second), gpu.Some[uint32](60), gpu.Some(uint64(7)))
	want := []Point{{T: t0.Unix() + 30, N: 2, UtilSum: 80, UtilMax: 60, MemMax: 7}}
	if !reflect.DeepEqual(s.Points, want) {
		t.Errorf("Points = %+v, want %+v", s.Points, want)
	}
}

func TestSeriesCoarsen(t *testing.T) {
	s := NewSeries(t0, time.Second, 4)
	for i := range 5 {
		s.Add(at(i), gpu.Some(uint32(10*(i+1))), gpu.Some(uint64(i)))
	}
	// Five one-second points exceed four: buckets become 2 s wide and
	// {0,1}, {2,3}, {4} merge.
	s0 := t0.Unix()
	want := []Point{
		{T: s0, N: 2, UtilSum: 30, UtilMax: 20, MemMax: 1},
		{T: s0 + 2, N: 2, UtilSum: 70, UtilMax: 40, MemMax: 3},
		{T: s0 + 4, N: 1, UtilSum: 50, UtilMax: 50, MemMax: 4},
	}
	if s.Step != 2 || !reflect.DeepEqual(s.Points, want) {
		t.Errorf("Step %d, Points %+v; want 2, %+v", s.Step, s.Points, want)
	}
	// New readings land in the wider buckets.
	s.Add(at(5), gpu.Some[uint32](100), gpu.Some(uint64(0)))
	if len(s.Points) != 3 || s.Points[2].N != 2 || s.Points[2].UtilMax != 100 {
		t.Errorf("after a reading at 5 s: %+v, want it merged into the bucket at 4 s", s.Points)
	}
}

func TestSeriesCoarsenWithGap(t *testing.T) {
	// Points far apart do not merge by doubling once: coarsening repeats
	// until the series fits.
	s := NewSeries(t0, time.Second, 2)
	for _, sec := range []int{0, 100, 200} {
		s.Add(at(sec), gpu.Some[uint32](1), gpu.Opt[uint64]{})
	}
	// Step 128: buckets 0, 0 (100/128), 128 (200/128) → two points.
	if s.Step != 128 || len(s.Points) != 2 || s.Points[0].N != 2 || s.Points[1].T != t0.Unix()+128 {
		t.Errorf("Step %d, Points %+v; want step 128, points at 0 (N 2) and 128", s.Step, s.Points)
	}
}

// seriesTotals are what coarsening must preserve.
type seriesTotals struct {
	n, utilSum uint64
	utilMax    uint8
	memMax     uint64
}

func totalsOf(s *Series) seriesTotals {
	var tot seriesTotals
	for _, p := range s.Points {
		tot.n += uint64(p.N)
		tot.utilSum += uint64(p.UtilSum)
		tot.utilMax = max(tot.utilMax, p.UtilMax)
		tot.memMax = max(tot.memMax, p.MemMax)
	}
	return tot
}

func TestSeriesPropertyRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(20250301, 7))
	for trial := range 300 {
		maxPoints := 2 + rng.IntN(63)
		stepSec := int64(1 + rng.IntN(5))
		s := NewSeries(t0, time.Duration(stepSec)*time.Second, maxPoints)
		var want seriesTotals
		ts := t0
		adds := rng.IntN(3000)
		for i := range adds {
			switch r := rng.IntN(100); {
			case r < 3: // clock step backwards
				ts = ts.Add(-time.Duration(rng.IntN(60)) * time.Second)
			case r < 6: // sampling gap
				ts = ts.Add(time.Duration(rng.IntN(10_000)) * time.Second)
			default:
				ts = ts.Add(time.Duration(rng.IntN(int(3*stepSec*1000))) * time.Millisecond)
			}
			var util gpu.Opt[uint32]
			if rng.IntN(10) > 0 {
				util = gpu.Some(uint32(rng.IntN(150)))
				want.n++
				want.utilSum += uint64(min(util.Value, 100))
				want.utilMax = max(want.utilMax, uint8(min(util.Value, 100)))
			}
			var mem gpu.Opt[uint64]
			if rng.IntN(10) > 0 {
				mem = gpu.Some(rng.Uint64N(200 * gib))
				want.memMax = max(want.memMax, mem.Value)
			}
			prevStep := s.Step
			s.Add(ts, util, mem)

			if len(s.Points) > maxPoints {
				t.Fatalf("trial %d add %d: %d points, want ≤ %d", trial, i, len(s.Points), maxPoints)
			}
			if s.Step < prevStep {
				t.Fatalf("trial %d add %d: step shrank from %d to %d", trial, i, prevStep, s.Step)
			}
		}
		if got := totalsOf(&s); got != want {
			t.Fatalf("trial %d (%d adds, max %d): totals %+v, want %+v", trial, adds, maxPoints, got, want)
		}
		// The step is the initial one doubled some number of times.
		if ratio := s.Step / stepSec; s.Step%stepSec != 0 || bits.OnesCount64(uint64(ratio)) != 1 {
			t.Fatalf("trial %d: step %d is not %d × 2^k", trial, s.Step, stepSec)
		}
		for k, p := range s.Points {
			if (p.T-s.Start)%s.Step != 0 {
				t.Fatalf("trial %d: point %d at %d not on a %d s bucket boundary from %d", trial, k, p.T, s.Step, s.Start)
			}
			if k > 0 && p.T <= s.Points[k-1].T {
				t.Fatalf("trial %d: points not strictly increasing at %d: %d after %d", trial, k, p.T, s.Points[k-1].T)
			}
		}
	}
}

func TestSeriesWeekAtOneSecond(t *testing.T) {
	const week = 7 * 24 * 3600 // 604800 readings
	s := NewSeries(t0, time.Second, 1024)
	for i := range week {
		s.Add(at(i), gpu.Some(uint32(i%101)), gpu.Some(uint64(i)))
		if len(s.Points) > 1024 {
			t.Fatalf("after %d readings: %d points, want ≤ 1024", i+1, len(s.Points))
		}
	}
	// 604800 s over 1024 points needs buckets ≥ 590.6 s: the first power of
	// two that fits is 1024 s, giving ceil(604800/1024) = 591 points.
	if s.Step != 1024 || len(s.Points) != 591 {
		t.Errorf("Step %d, %d points; want 1024, 591", s.Step, len(s.Points))
	}
	tot := totalsOf(&s)
	// Σ i%101 over 0..604799: 5988 full cycles of 0..100 (5050 each) and
	// 0..11 (66).
	if tot.n != week || tot.utilSum != 5988*5050+66 || tot.utilMax != 100 || tot.memMax != week-1 {
		t.Errorf("totals %+v, want n %d, sum %d, max 100, mem %d", tot, week, 5988*5050+66, week-1)
	}
}

func BenchmarkSeriesAdd(b *testing.B) {
	s := NewSeries(t0, time.Second, DefaultMaxPoints)
	util, mem := gpu.Some[uint32](50), gpu.Some(40*gib)
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		s.Add(at(i), util, mem)
		i++
	}
}

// Coarsened thins a series to the bound by the recorder's own doubling:
// counts, sums and maxima over the whole series stay exact, the floor of
// memory read from the points stays what it was (kept in Thinned), and
// the series it was called on is left as it was.
func TestCoarsened(t *testing.T) {
	s := NewSeries(t0, time.Second, 1024)
	for i := range 3000 {
		at := t0.Add(time.Duration(i) * time.Second)
		s.Add(at, gpu.Some(uint32(i*37%101)), gpu.Some(uint64(10<<30+(i%97)<<20)))
		if i%3 == 0 {
			s.AddActivity(at, gpu.Some(float64(i%89)+0.25), gpu.Some(float64(i%13)/7))
		}
	}
	before := s
	before.Points = slicesClone(s.Points)
	floor, ok := s.MemFloor()
	if !ok {
		t.Fatal("no floor before thinning")
	}
	c := s.Coarsened(128)
	if n := len(c.Points); n > 128 || n < 64 {
		t.Fatalf("%d points, want 64–128", n)
	}
	if !reflect.DeepEqual(s, before) {
		t.Error("Coarsened modified the series it was called on")
	}
	if c.Thinned == nil || c.Thinned.Step != s.Step || c.Thinned.Points != len(s.Points) {
		t.Fatalf("Thinned = %+v, want step %d, %d points", c.Thinned, s.Step, len(s.Points))
	}
	if got, ok := c.MemFloor(); !ok || got != floor {
		t.Errorf("floor after thinning %d (%v), want %d as before", got, ok, floor)
	}
	if plain := (Series{Points: c.Points}); func() bool { f, _ := plain.MemFloor(); return f == floor }() {
		t.Error("the thinned points give the same floor by themselves: the test does not test the kept figure")
	}
	// The float sums are added in another order: equal to rounding.
	a, b := totals(s.Points), totals(c.Points)
	if math.Abs(a.SMSum-b.SMSum) > 1e-9*a.SMSum || math.Abs(a.TensorSum-b.TensorSum) > 1e-9*a.TensorSum {
		t.Errorf("activity sums after thinning %g, %g; want %g, %g", b.SMSum, b.TensorSum, a.SMSum, a.TensorSum)
	}
	a.SMSum, a.TensorSum, b.SMSum, b.TensorSum = 0, 0, 0, 0
	if a != b {
		t.Errorf("totals after thinning %+v, want %+v", b, a)
	}
	again := c.Coarsened(64)
	if again.Thinned.Points != len(s.Points) || again.Thinned.Step != s.Step {
		t.Errorf("thinned twice: Thinned = %+v, want the series as recorded", again.Thinned)
	}
	if f, _ := again.MemFloor(); f != floor {
		t.Errorf("thinned twice: floor %d, want %d", f, floor)
	}
	if same := c.Coarsened(128); !reflect.DeepEqual(same, c) {
		t.Error("a series within the bound changed")
	}
}

type pointTotals struct {
	N, UtilSum, SMN, TensorN uint64
	UtilMax                  uint8
	MemMax                   uint64
	SMSum, TensorSum         float64
}

func totals(pts []Point) pointTotals {
	var t pointTotals
	for _, p := range pts {
		t.N += uint64(p.N)
		t.UtilSum += uint64(p.UtilSum)
		t.SMN += uint64(p.SMN)
		t.TensorN += uint64(p.TensorN)
		t.UtilMax = max(t.UtilMax, p.UtilMax)
		t.MemMax = max(t.MemMax, p.MemMax)
		t.SMSum += p.SMSum
		t.TensorSum += p.TensorSum
	}
	return t
}

func slicesClone(p []Point) []Point { return append([]Point(nil), p...) }
