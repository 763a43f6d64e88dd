package demo

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

func TestPatternUsage(t *testing.T) {
	tests := []struct {
		name              string
		p                 Pattern
		x                 float64
		wantMem, wantUtil float64 // wantUtil: mean over many readings
		utilTol           float64
	}{
		{name: "ramp starts at a fifth", p: Pattern{Mem: MemRamp, MemFrac: 0.5, Util: 80}, x: 0, wantMem: 0.1, wantUtil: 80, utilTol: 1},
		{name: "ramp full after a tenth", p: Pattern{Mem: MemRamp, MemFrac: 0.5, Util: 80}, x: 0.1, wantMem: 0.5, wantUtil: 80, utilTol: 1},
		{name: "prealloc takes the card", p: Pattern{Mem: MemPrealloc, MemFrac: 0.1, Util: 50}, x: 0, wantMem: 0.95, wantUtil: 50, utilTol: 1},
		{name: "steady from the start", p: Pattern{Mem: MemSteady, MemFrac: 0.3, Util: 10}, x: 0, wantMem: 0.3, wantUtil: 10, utilTol: 0.5},
		// On with probability 10/70 at 70 %, else about 1 %: mean ≈ 10.9.
		{name: "bursty averages util", p: Pattern{Mem: MemSteady, MemFrac: 0.3, Util: 10, Burst: 60}, x: 0.5, wantMem: 0.3, wantUtil: 10.9, utilTol: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			sum := 0.0
			const n = 20000
			for range n {
				mem, util := tt.p.usage(tt.x, rng)
				if math.Abs(mem-tt.wantMem) > 1e-9 {
					t.Fatalf("memory %v of the card, want %v", mem, tt.wantMem)
				}
				if util < 0 || util > 100 {
					t.Fatalf("utilisation %v out of 0–100", util)
				}
				sum += util
			}
			if got := sum / n; math.Abs(got-tt.wantUtil) > tt.utilTol {
				t.Errorf("mean utilisation %.2f, want %.2f ± %.1f", got, tt.wantUtil, tt.utilTol)
			}
		})
	}
}

func TestTemplateAdvanceKeepsToWindow(t *testing.T) {
	day := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	w := &Template{From: 8 * time.Hour, To: 18 * time.Hour}
	tests := []struct {
		from time.Time
		d    time.Duration
		want time.Time
	}{
		{from: day, d: 0, want: day.Add(8 * time.Hour)},
		{from: day.Add(9 * time.Hour), d: time.Hour, want: day.Add(10 * time.Hour)},
		{from: day.Add(17 * time.Hour), d: 2 * time.Hour, want: day.Add(24*time.Hour + 9*time.Hour)},
		{from: day.Add(20 * time.Hour), d: 25 * time.Hour, want: day.Add(3*24*time.Hour + 13*time.Hour)},
	}
	for _, tt := range tests {
		if got := w.advance(tt.from, tt.d); !got.Equal(tt.want) {
			t.Errorf("advance(%s, %s) = %s, want %s", tt.from.Format(time.DateTime), tt.d, got.Format(time.DateTime), tt.want.Format(time.DateTime))
		}
	}
	all := &Template{}
	if got, want := all.advance(day.Add(23*time.Hour), 50*time.Hour), day.Add(73*time.Hour); !got.Equal(want) {
		t.Errorf("all-day advance = %s, want %s", got, want)
	}
}

func TestSubmissionsInWindow(t *testing.T) {
	w := []Template{{User: "u", Name: "n", GPUs: 1, PerDay: 20, From: 8 * time.Hour, To: 18 * time.Hour,
		RunMin: time.Minute, RunMax: time.Minute, Limit: time.Hour}}
	jobs := submissions(MonthOptions{Seed: 1, Days: 10, Start: DefaultStart, Workload: w})
	if n := len(jobs); n < 150 || n > 250 {
		t.Errorf("%d submissions in 10 days at 20 a day", n)
	}
	for _, j := range jobs {
		if h := j.submit.Hour(); h < 8 || h >= 18 {
			t.Fatalf("job submitted at %s, outside 08:00–18:00", j.submit.Format(time.DateTime))
		}
	}
}
