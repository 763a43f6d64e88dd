package present

import (
	"math"
	"testing"
	"time"
)

// formCase is one row of a form's table: a value and the text it is
// written as.
type formCase[T any] struct {
	name string
	in   T
	want string
}

// testForm runs a form's table.
func testForm[T any](t *testing.T, form string, f func(T) string, cases []formCase[T]) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			if got := f(tt.in); got != tt.want {
				t.Errorf("%s(%v) = %q, want %q", form, tt.in, got, tt.want)
			}
		})
	}
}

func TestNumber(t *testing.T) {
	type in struct {
		v   float64
		dec int
	}
	testForm(t, "Number", func(x in) string { return Number(x.v, x.dec) }, []formCase[in]{
		{"small", in{12.34, 1}, "12.3"},
		{"thousands", in{12345.6, 1}, "12,345.6"},
		{"millions", in{1234567, 0}, "1,234,567"},
		{"negative", in{-1234, 0}, "-1,234"},
		{"negative zero", in{-0.01, 1}, "0.0"},
		{"nan", in{math.NaN(), 1}, Dash},
		{"inf", in{math.Inf(1), 0}, Dash},
	})
}

func TestCount(t *testing.T) {
	testForm(t, "Count", func(n int) string { return Count(n, "job", "jobs") }, []formCase[int]{
		{"none", 0, "0 jobs"}, {"one", 1, "1 job"}, {"two", 2, "2 jobs"}, {"thousands", 2000, "2,000 jobs"},
	})
	testForm(t, "Int", Int, []formCase[int]{
		{"zero", 0, "0"}, {"hundreds", 999, "999"}, {"thousands", 1234567, "1,234,567"}, {"negative", -4200, "-4,200"},
	})
	testForm(t, "Plural", func(n int) string { return Plural(n, "is", "are") }, []formCase[int]{
		{"none", 0, "are"}, {"one", 1, "is"}, {"two", 2, "are"},
	})
}

func TestList(t *testing.T) {
	testForm(t, "List", List, []formCase[[]string]{
		{"none", nil, ""}, {"one", []string{"a"}, "a"}, {"two", []string{"a", "b"}, "a and b"},
		{"three", []string{"a", "b", "c"}, "a, b and c"},
	})
}

func TestDuration(t *testing.T) {
	cases := []formCase[time.Duration]{
		// Slurm's own form (sacct Elapsed, squeue TIME_LIMIT): [D-]HH:MM:SS.
		{"zero", 0, "00:00:00"},
		{"seconds", 45 * time.Second, "00:00:45"},
		{"minutes", 90 * time.Second, "00:01:30"},
		{"half hour", 30 * time.Minute, "00:30:00"},
		{"just under", 29*time.Minute + 59*time.Second, "00:29:59"},
		{"hours", 6*time.Hour + 12*time.Minute + 30*time.Second, "06:12:30"},
		{"end of a day", 23*time.Hour + 59*time.Minute + 59*time.Second, "23:59:59"},
		{"days", 72 * time.Hour, "3-00:00:00"},
		{"days and seconds", 51*time.Hour + 5*time.Second, "2-03:00:05"},
		{"negative", -90 * time.Minute, "-01:30:00"},
		// A statistic's fraction of a second rounds to the nearest.
		{"rounded up", 999 * time.Millisecond, "00:00:01"},
		{"rounded down", 45*time.Second + 400*time.Millisecond, "00:00:45"},
		{"replay mean", 7199600 * time.Millisecond, "02:00:00"},
	}
	testForm(t, "Duration", Duration, cases)
	secs := []formCase[float64]{{"nan", math.NaN(), Dash}, {"inf", math.Inf(1), Dash}}
	for _, c := range cases {
		secs = append(secs, formCase[float64]{c.name, c.in.Seconds(), c.want})
	}
	testForm(t, "Seconds", Seconds, secs)
}

func TestInstant(t *testing.T) {
	testForm(t, "Instant", func(x time.Time) string { return Instant(x, time.UTC) }, []formCase[time.Time]{
		{"set", time.Date(2026, 11, 3, 14, 5, 1, 0, time.UTC), "2026-11-03T14:05:01"},
		{"in the given zone", time.Date(2026, 11, 3, 14, 5, 1, 0, time.FixedZone("CET", 3600)), "2026-11-03T13:05:01"},
		{"unset", time.Time{}, "-"},
	})
}

func TestPercent(t *testing.T) {
	testForm(t, "Percent", Percent, []formCase[float64]{
		{"zero", 0, "0.0 %"}, {"share", 0.923, "92.3 %"}, {"whole", 1, "100.0 %"}, {"over", 12.5, "1,250.0 %"},
		{"nan", math.NaN(), Dash},
	})
}

func TestShare(t *testing.T) {
	testForm(t, "Share", Share, []formCase[float64]{
		{"zero", 0, "0 %"}, {"whole", 0.25, "25 %"}, {"one decimal", 0.299, "29.9 %"},
		{"rounded", 0.12345, "12.3 %"}, {"all", 1, "100 %"}, {"no separator", 12.5, "1250 %"},
		{"nan", math.NaN(), Dash}, {"inf", math.Inf(-1), Dash},
	})
}

func TestWholePercent(t *testing.T) {
	testForm(t, "WholePercent", WholePercent, []formCase[float64]{
		{"zero", 0, "0"}, {"share", 0.94, "94"}, {"rounded", 0.286, "29"}, {"all", 1, "100"},
		{"negative zero", -0.001, "0"}, {"nan", math.NaN(), Dash},
	})
}

func TestDecimal(t *testing.T) {
	testForm(t, "Decimal", Decimal, []formCase[float64]{
		{"zero", 0, "0"}, {"whole", 80, "80"}, {"one decimal", 2.5, "2.5"}, {"rounded", 0.46, "0.5"},
		{"no separator", 1234.56, "1234.6"}, {"half away from zero", 0.25, "0.3"},
		{"negative zero", -0.04, "0"}, {"negative", -2.46, "-2.5"}, {"nan", math.NaN(), Dash}, {"inf", math.Inf(1), Dash},
	})
}

func TestPercentWhole(t *testing.T) {
	testForm(t, "PercentWhole", PercentWhole, []formCase[float64]{
		{"whole", 0.92, "92 %"}, {"rounded", 0.876, "88 %"}, {"zero", 0, "0 %"}, {"half to even", 0.375, "38 %"},
		{"above the whole", 12.5, "1,250 %"}, {"nan", math.NaN(), Dash},
	})
}

func TestTimes(t *testing.T) {
	testForm(t, "Times", Times, []formCase[float64]{
		{"one decimal", 3.24, "3.2×"}, {"whole", 3, "3×"}, {"half up", 4.25, "4.3×"},
		{"no separator", 1234.5, "1234.5×"}, {"nan", math.NaN(), Dash},
	})
}

func TestGPUHours(t *testing.T) {
	testForm(t, "GPUHours", GPUHours, []formCase[float64]{
		{"zero", 0, "0.0"}, {"small", 12.46, "12.5"}, {"tens", 57.3, "57.3"}, {"below 1000", 999.94, "999.9"},
		{"thousands", 1234.5, "1,234"},
	})
}

func TestGPUsHeld(t *testing.T) {
	testForm(t, "GPUsHeld", GPUsHeld, []formCase[float64]{
		{"whole", 7, "7"}, {"shards", 52.456, "52.46"}, {"thousands", 1024, "1,024"}, {"zero", 0, "0"},
	})
}

func TestEnergy(t *testing.T) {
	testForm(t, "Energy", Energy, []formCase[float64]{
		{"zero", 0, "0 Wh"}, {"watt-hours", 842 * 3600, "842 Wh"}, {"kilowatt-hours", 12.34 * 3.6e6, "12.3 kWh"},
		{"megawatt-hours", 1234 * 3.6e6, "1,234 kWh"},
	})
	testForm(t, "KWh", KWh, []formCase[float64]{{"small", 0.44, "0.4 kWh"}, {"large", 12345.6, "12,346 kWh"}})
}

func TestBytes(t *testing.T) {
	testForm(t, "GiB", GiB, []formCase[uint64]{
		{"zero", 0, "0"}, {"half", 512 << 20, "0.5"}, {"whole", 80 << 30, "80"}, {"fraction", 81_927_000_000, "76.3"},
	})
	testForm(t, "Bytes", Bytes, []formCase[uint64]{
		{"zero", 0, "0 B"}, {"kib", 1536, "1.5 KiB"}, {"mib", 6 << 20, "6 MiB"}, {"half gib", 512 << 20, "512 MiB"},
		{"whole gib", 80 << 30, "80 GiB"}, {"fraction", 81_927_000_000, "76.3 GiB"},
	})
}

func TestPercentOrNone(t *testing.T) {
	half := 0.5
	testForm(t, "PercentOrNone", PercentOrNone, []formCase[*float64]{
		{"none", nil, "–"}, {"share", &half, "50.0 %"},
	})
}

func TestAccountAndJobName(t *testing.T) {
	testForm(t, "Account", Account, []formCase[string]{
		{name: "named", in: "physics", want: "physics"},
		{name: "empty", in: "", want: "(no account)"},
		{name: "blank", in: "  ", want: "(no account)"},
	})
	testForm(t, "JobName", JobName, []formCase[string]{
		{name: "named", in: "train.sh", want: "train.sh"},
		{name: "empty", in: "", want: "(no name)"},
	})
}

func TestOrMissing(t *testing.T) {
	testForm(t, "OrMissing", OrMissing, []formCase[string]{
		{"empty", "", Missing},
		{"value", "gpu", "gpu"},
		{"space kept", " ", " "},
	})
}

func TestAmount(t *testing.T) {
	testForm(t, "Amount", Amount, []formCase[float64]{
		{"small", 812.4, "812"},
		{"thousands", 123456.6, "123,457"},
		{"zero", 0, "0"},
		{"nan", math.NaN(), Dash},
	})
}
