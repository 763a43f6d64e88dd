package analysis

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
	"time"
)

// bigOf is t as a big.Int, to check gpuTime against.
func bigOf(t gpuTime) *big.Int {
	n := new(big.Int).SetUint64(t.hi)
	return n.Lsh(n, 64).Or(n, new(big.Int).SetUint64(t.lo))
}

func TestGPUTimeOf(t *testing.T) {
	for _, tc := range []struct {
		name string
		gpus int
		d    time.Duration
		want string // decimal GPU-nanoseconds
	}{
		{"one GPU-hour", 1, time.Hour, "3600000000000"},
		{"none held", 0, time.Hour, "0"},
		{"no time", 8, 0, "0"},
		{"negative", 8, -time.Hour, "0"},
		{"beyond 64 bits", 1 << 20, 1 << 62, "4835703278458516698824704"}, // 2^82
		{"largest", math.MaxInt64, math.MaxInt64, "85070591730234615847396907784232501249"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := bigOf(gpuTimeOf(tc.gpus, tc.d)).String(); got != tc.want {
				t.Errorf("gpuTimeOf(%d, %d) = %s, want %s", tc.gpus, tc.d, got, tc.want)
			}
		})
	}
}

func TestGPUTimeOfFloat(t *testing.T) {
	for _, tc := range []struct {
		name string
		ns   float64
		want string
	}{
		{"a third of a GPU for an hour", float64(time.Hour) / 3, "1200000000000"},
		{"rounds to the nearest", 2.5e9 + 0.6, "2500000001"},
		{"zero", 0, "0"},
		{"negative", -1, "0"},
		{"not a number", math.NaN(), "0"},
		{"just below 2^64", math.Nextafter(1<<64, 0), "18446744073709549568"},
		{"2^64", 1 << 64, "18446744073709551616"},
		{"above 2^64", 3 << 70, "3541774862152233910272"},
		{"2^126", math.Ldexp(1, 126), "85070591730234615865843651857942052864"},
		{"2^127", math.Ldexp(1, 127), "170141183460469231731687303715884105728"},
		{"too large: the largest", math.Ldexp(1, 130), "340282366920938463463374607431768211455"},
		{"infinite: the largest", math.Inf(1), "340282366920938463463374607431768211455"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := bigOf(gpuTimeOfFloat(tc.ns)).String(); got != tc.want {
				t.Errorf("gpuTimeOfFloat(%g) = %s, want %s", tc.ns, got, tc.want)
			}
		})
	}
}

func TestGPUTimeAdd(t *testing.T) {
	t.Run("carries into the high word", func(t *testing.T) {
		s := gpuTime{lo: math.MaxUint64}
		s.add(gpuTime{lo: 2})
		if s != (gpuTime{hi: 1, lo: 1}) {
			t.Errorf("got %+v, want {hi:1 lo:1}", s)
		}
	})
	t.Run("overflow stays at the largest, +Inf hours", func(t *testing.T) {
		s := gpuTime{hi: 1 << 63}
		s.add(gpuTime{hi: 1 << 63})
		if s != maxGPUTime || !math.IsInf(s.hours(), 1) {
			t.Errorf("got %+v (%g h), want the largest and +Inf", s, s.hours())
		}
		s.add(gpuTime{lo: 1})
		if s != maxGPUTime {
			t.Errorf("the largest plus one: %+v, want the largest", s)
		}
	})
	t.Run("twice and cmp", func(t *testing.T) {
		a, b := gpuTimeOf(3, time.Hour), gpuTimeOf(7, time.Hour)
		if a.twice().cmp(b) >= 0 || b.cmp(a.twice()) <= 0 || a.cmp(a) != 0 {
			t.Errorf("2 × 3 GPU-hours vs 7: cmp %d, want −1", a.twice().cmp(b))
		}
		hi := gpuTime{hi: 1}
		if hi.cmp(gpuTime{lo: math.MaxUint64}) != 1 || (gpuTime{lo: math.MaxUint64}).cmp(hi) != -1 {
			t.Error("the high word does not decide")
		}
	})
}

// hours is the float64 nearest to the exact quotient, for sums below and
// above 2^53 nanoseconds.
func TestGPUTimeHoursNearest(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	hour := big.NewInt(int64(time.Hour))
	for i := range 2000 {
		var g gpuTime
		switch i % 3 {
		case 0:
			g = gpuTime{lo: r.Uint64N(1 << 53)}
		case 1:
			g = gpuTime{lo: r.Uint64()}
		default:
			g = gpuTime{hi: r.Uint64N(1 << 40), lo: r.Uint64()}
		}
		want, _ := new(big.Rat).SetFrac(bigOf(g), hour).Float64()
		if got := g.hours(); got != want {
			t.Fatalf("%+v: %.17g h, want %.17g", g, got, want)
		}
	}
	if got := gpuTimeOf(2, 30*time.Minute).hours(); got != 1 {
		t.Errorf("two GPUs for half an hour: %g h, want 1", got)
	}
}

// The sum is the same in every order, where the float sum of hours is
// not: 1,000.5 GPU-hours planted as a 500-hour run on two GPUs and five
// 6-minute runs on one.
func TestGPUTimeSumIgnoresOrder(t *testing.T) {
	terms := []gpuTime{gpuTimeOf(2, 500*time.Hour)}
	floats := []float64{2 * (500 * time.Hour).Hours()}
	for range 5 {
		terms = append(terms, gpuTimeOf(1, 6*time.Minute))
		floats = append(floats, (6 * time.Minute).Hours())
	}
	var fwd, back gpuTime
	var ffwd, fback float64
	for i := range terms {
		fwd.add(terms[i])
		ffwd += floats[i]
		back.add(terms[len(terms)-1-i])
		fback += floats[len(terms)-1-i]
	}
	if ffwd == fback {
		t.Fatalf("the float sums agree (%.17g): the plant does not test the order", ffwd)
	}
	if fwd != back || fwd.hours() != 1000.5 {
		t.Errorf("sums %+v and %+v (%.17g h), want one, 1000.5 h", fwd, back, fwd.hours())
	}
}
