package demo

import (
	"math"
	"math/rand/v2"
	"testing"
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
