package analysis

import (
	"math/rand/v2"
	"testing"

	"github.com/montanaflynn/stats"
)

func TestNearestRank(t *testing.T) {
	tests := []struct {
		n    int
		p    float64
		want int
	}{
		{n: 10, p: 50, want: 5},    // 5 exactly
		{n: 10, p: 95, want: 10},   // ceil(9.5)
		{n: 10, p: 10, want: 1},    // 1 exactly
		{n: 10, p: 11, want: 2},    // ceil(1.1)
		{n: 100, p: 7, want: 7},    // 7·100/100 is exact; 7/100·100 would not be
		{n: 1, p: 50, want: 1},     // ceil(0.5)
		{n: 3, p: 95, want: 3},     // ceil(2.85)
		{n: 4, p: 50, want: 2},     // 2 exactly
		{n: 20, p: 10, want: 2},    // VRAMFloor's rank in 20 points
		{n: 5, p: 0.0001, want: 1}, // at least 1
	}
	for _, tt := range tests {
		if got := nearestRank(tt.n, tt.p); got != tt.want {
			t.Errorf("nearestRank(%d, %v) = %d, want %d", tt.n, tt.p, got, tt.want)
		}
	}
}

func TestDistOf(t *testing.T) {
	tests := []struct {
		name string
		in   []float64
		want Dist
	}{
		{name: "empty", in: nil, want: Dist{}},
		{name: "one", in: []float64{7}, want: Dist{N: 1, Mean: 7, P50: 7, P95: 7, Max: 7}},
		// 1..10: mean 5.5, p50 rank 5 → 5, p95 rank ceil(9.5) = 10 → 10.
		{name: "1..10 unsorted", in: []float64{10, 3, 1, 7, 5, 2, 9, 4, 8, 6}, want: Dist{N: 10, Mean: 5.5, P50: 5, P95: 10, Max: 10}},
		// 20 values 1..20: p95 rank 19 → 19.
		{name: "1..20", in: seq(20), want: Dist{N: 20, Mean: 10.5, P50: 10, P95: 19, Max: 20}},
		// Waits of 0, 10 m, 30 m, 1 h: p50 rank 2 → 600 s, p95 rank 4 → 3600 s.
		{name: "waits", in: []float64{3600, 0, 1800, 600}, want: Dist{N: 4, Mean: 1500, P50: 600, P95: 3600, Max: 3600}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := distOf(tt.in); got != tt.want {
				t.Errorf("distOf = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func seq(n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = float64(i + 1)
	}
	return s
}

// TestPercentileMatchesStats checks the nearest-rank percentile against
// montanaflynn/stats' PercentileNearestRank on random data: two
// implementations of one definition.
func TestPercentileMatchesStats(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		n := 1 + r.IntN(300)
		vs := make([]float64, n)
		for i := range vs {
			vs[i] = float64(r.IntN(50)) // ties are where methods differ
		}
		for _, p := range []float64{1, 5, 10, 25, 50, 75, 90, 95, 99, 100} {
			want, err := stats.PercentileNearestRank(vs, p)
			if err != nil {
				t.Fatal(err)
			}
			sorted := append([]float64(nil), vs...)
			d := distOf(sorted) // sorts
			if got := PercentileSorted(sorted, p); got != want {
				t.Fatalf("trial %d n %d p %v: got %v, stats %v", trial, n, p, got, want)
			}
			if p == 50 && d.P50 != want || p == 95 && d.P95 != want {
				t.Fatalf("trial %d: distOf %+v disagrees with stats %v at p%v", trial, d, want, p)
			}
		}
	}
}

func TestCheckString(t *testing.T) {
	tests := []struct {
		c    Check
		want string
	}{
		{Check{MetricElapsed, 22320, OpGE, 14400}, "ran 06:12:00 ≥ 04:00:00"},
		{Check{MetricWait, 600, OpLT, 900}, "waited 00:10:00 < 00:15:00"},
		{Check{MetricWaitRatio, 4.25, OpGE, 4}, "wait/run 4.3× ≥ 4×"},
		{Check{MetricUtilMean, 87.04, OpGE, 30}, "mean util 87 % ≥ 30 %"},
		{Check{MetricUtilP50, 79.96, OpLE, 80}, "median util 80 % ≤ 80 %"},
		{Check{MetricVRAMPeakFrac, 0.953, OpGE, 0.9}, "VRAM peak 95.3 % of the card ≥ 90 %"},
		{Check{MetricIOWait, 0.2, OpGE, 0.2}, "IO wait 20 % of wall time ≥ 20 %"},
		{Check{MetricUnusedGPUs, 3, OpGE, 1}, "unused GPUs 3 ≥ 1"},
		{Check{"custom", 1.25, OpEQ, 1.25}, "custom 1.3 = 1.3"},
	}
	for _, tt := range tests {
		if got := tt.c.String(); got != tt.want {
			t.Errorf("%+v = %q, want %q", tt.c, got, tt.want)
		}
	}
}
