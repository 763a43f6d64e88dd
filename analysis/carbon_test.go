package analysis

import (
	"strings"
	"testing"
	"time"
)

// TestCarbonIntensity: a fixed factor is the factor; hourly factors are
// weighted by the overlap of each hour, and a span with an hour the
// factors lack has none.
func TestCarbonIntensity(t *testing.T) {
	h := func(hour int) int64 { return time.Date(2026, 11, 1, hour, 0, 0, 0, time.UTC).Unix() }
	at := func(hour, min int) time.Time { return time.Date(2026, 11, 1, hour, min, 0, 0, time.UTC) }
	hourly := &Carbon{Hourly: map[int64]float64{h(10): 100, h(11): 400}}
	tests := []struct {
		name     string
		c        *Carbon
		from, to time.Time
		want     float64
		ok       bool
	}{
		{"none", nil, at(10, 0), at(11, 0), 0, false},
		{"fixed", &Carbon{Fixed: 350}, at(10, 0), at(11, 0), 350, true},
		{"one hour", hourly, at(10, 0), at(11, 0), 100, true},
		{"across two", hourly, at(10, 30), at(11, 30), 250, true},
		{"weighted", hourly, at(10, 45), at(12, 0), (100*15 + 400*60) / 75.0, true},
		{"an hour missing", hourly, at(11, 30), at(12, 30), 0, false},
		{"under a second", hourly, at(11, 10), at(11, 10).Add(time.Millisecond), 400, true},
		{"the fixed factor where no hourly one", &Carbon{Fixed: 200, Hourly: hourly.Hourly}, at(11, 30), at(12, 30), 300, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := tt.c.Intensity(tt.from, tt.to)
			if ok != tt.ok || !approx(got, tt.want) {
				t.Errorf("Intensity = %v, %v; want %v, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestParseCarbonCSV(t *testing.T) {
	got, err := ParseCarbonCSV(strings.NewReader("hour,gco2e_per_kwh\n# a comment\n2026-11-01T10:00:00Z,100\n\n2026-11-01T12:00:00+01:00, 400.5\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[int64]float64{
		time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC).Unix(): 100,
		time.Date(2026, 11, 1, 11, 0, 0, 0, time.UTC).Unix(): 400.5,
	}
	if len(got) != len(want) || got[time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC).Unix()] != 100 ||
		got[time.Date(2026, 11, 1, 11, 0, 0, 0, time.UTC).Unix()] != 400.5 {
		t.Errorf("got %v, want %v", got, want)
	}
	for _, bad := range []struct{ name, text, err string }{
		{"not an hour", "2026-11-01T10:30:00Z,100\n", "line 1: 2026-11-01T10:30:00Z is not the start of an hour"},
		{"twice", "2026-11-01T10:00:00Z,100\n2026-11-01T10:00:00Z,200\n", "line 2: hour 2026-11-01T10:00:00Z given twice"},
		{"negative", "2026-11-01T10:00:00Z,-1\n", "line 1: factor -1 out of"},
		{"no comma", "2026-11-01T10:00:00Z 100\n", "line 1: want hour,gco2e_per_kwh"},
		{"bad number", "2026-11-01T10:00:00Z,100\n2026-11-01T11:00:00Z,lots\n", `line 2: factor "lots": not a number`},
		{"empty", "hour,factor\n", "no hourly factor"},
		{"bad time", "1 Nov 10:00,100\n", "line 1: hour \"1 Nov 10:00\": want RFC 3339"},
	} {
		if _, err := ParseCarbonCSV(strings.NewReader(bad.text)); err == nil || !strings.Contains(err.Error(), bad.err) {
			t.Errorf("%s: err = %v, want %q", bad.name, err, bad.err)
		}
	}
}

// TestWorkloadCO2e: with a factor, CO2e stands beside kWh in the
// headline, per model and per account; without one it is absent.
func TestWorkloadCO2e(t *testing.T) {
	start := utc(time.March, 3, 0, 0)
	g := busy(90, 4)
	g.EnergyJ, g.EnergyValid = 3.6e6*2, true // 2 kWh
	j := ran("alice", start, start.Add(2*time.Hour), g)

	w := SummariseWorkload(Input{Jobs: []Job{j}}, WorkloadParams{Window: march}, DefaultConfig())
	if w.Headline.Energy.CO2eKg != nil || w.Carbon != "" {
		t.Errorf("without a factor: CO2e %v, carbon %q", w.Headline.Energy.CO2eKg, w.Carbon)
	}

	in := Input{Jobs: []Job{j}, Carbon: &Carbon{Fixed: 350, Source: "fixed 350 gCO2e/kWh"}}
	w = SummariseWorkload(in, WorkloadParams{Window: march}, DefaultConfig())
	for what, e := range map[string]Energy{"headline": w.Headline.Energy, "model": w.Models[0].Energy, "account": w.Accounts[0].Energy} {
		if e.CO2eKg == nil || !approx(*e.CO2eKg, 0.7) || !approx(e.CO2eCoverage, 1) {
			t.Errorf("%s: CO2e %v coverage %v; want 0.7 kg, 1", what, e.CO2eKg, e.CO2eCoverage)
		}
	}
	if w.Carbon != "fixed 350 gCO2e/kWh" {
		t.Errorf("carbon = %q", w.Carbon)
	}

	// Hourly factors for the first hour only: half the energy has CO2e.
	first := start.Unix()
	in.Carbon = &Carbon{Hourly: map[int64]float64{first: 500}, Source: "hourly"}
	w = SummariseWorkload(in, WorkloadParams{Window: march}, DefaultConfig())
	if e := w.Headline.Energy; e.CO2eKg != nil {
		t.Errorf("an hour without a factor: CO2e %v, want none for the job", *e.CO2eKg)
	}
	in.Carbon.Hourly[first+3600] = 300
	w = SummariseWorkload(in, WorkloadParams{Window: march}, DefaultConfig())
	if e := w.Headline.Energy; e.CO2eKg == nil || !approx(*e.CO2eKg, 2*0.4) {
		t.Errorf("hourly: CO2e %v, want 0.8 kg (2 kWh at a mean 400 g/kWh)", e.CO2eKg)
	}
}
