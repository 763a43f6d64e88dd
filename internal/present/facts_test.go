package present

import (
	"slices"
	"testing"
)

func TestGPUFacts(t *testing.T) {
	for _, tt := range []struct {
		name  string
		f     GPUFacts
		want  string
		flags []string
	}{
		{"nothing measured", GPUFacts{}, "util not measured; memory not measured; energy not measured", nil},
		{"all measured", GPUFacts{UtilMean: 47.6, UtilKnown: true, UtilP95: 90, P95Known: true, Idle: 0.031, IdleKnown: true,
			MemPeak: 60 << 30, MemTotal: 80 << 30, MemKnown: true, EnergyJ: 12.34 * 3.6e6, EnergyKnown: true, Shared: true},
			"util mean 48 %, p95 90 %, idle 3 %; memory peak 60 / 80 GiB (75 %); energy 12.3 kWh",
			[]string{"shared with other jobs (per-process readings)"}},
		{"mean only, card unknown", GPUFacts{UtilMean: 5, UtilKnown: true, MemPeak: 4608 << 20, MemKnown: true, IdleAllocation: true, Preallocated: true},
			"util mean 5 %; memory peak 4.5 GiB; energy not measured",
			[]string{"idle allocation (no process ever used this GPU)", "memory preallocated by the framework (the peak is not the need)"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.f.String(); got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
			if got := tt.f.Flags(); !slices.Equal(got, tt.flags) {
				t.Errorf("Flags() = %q, want %q", got, tt.flags)
			}
		})
	}
}

func TestActivityStat(t *testing.T) {
	type in struct {
		mean, p95 float64
		known     bool
	}
	testForm(t, "ActivityStat", func(x in) string { return ActivityStat(x.mean, x.p95, x.known) }, []formCase[in]{
		{"both", in{4.55, 12, true}, "mean 4.5 %, p95 12 %"}, {"tiny, no p95", in{0.02, 0, false}, "mean 0.02 %"},
	})
}
