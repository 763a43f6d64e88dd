package capacity

import (
	"errors"
	"testing"

	"github.com/gpuprof/gpuprof/analysis"
)

func TestParseFraction(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    float64
		wantErr bool
	}{
		{"percent", "30%", 0.3, false},
		{"fraction", "0.3", 0.3, false},
		{"percent with space", " 20 % ", 0.2, false},
		{"zero", "0", 0, false},
		{"above 100 percent", "150%", 1.5, false},
		{"negative percent", "-10%", -0.1, false},
		{"bare number above one", "30", 0, true},
		{"word", "lots", 0, true},
		{"empty", "", 0, true},
		{"NaN", "NaN", 0, true},
		{"infinite percent", "Inf%", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseFraction(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("ParseFraction(%q) error = %v, want error %v", tt.in, err, tt.wantErr)
			}
			if !tt.wantErr && (got-tt.want > 1e-12 || tt.want-got > 1e-12) {
				t.Errorf("ParseFraction(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseHorizon(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    int
		wantErr bool
	}{
		{"months", "12mo", 12, false},
		{"eighteen months", "18mo", 18, false},
		{"one year", "1y", 12, false},
		{"years yr", "2yr", 24, false},
		{"year and a half", "1.5y", 18, false},
		{"upper case", "6MO", 6, false},
		{"zero", "0mo", 0, false},
		{"no unit", "12", 0, true},
		{"minutes are not months", "12m", 0, true},
		{"fraction of a month", "1.5mo", 0, true},
		{"negative", "-1y", 0, true},
		{"absurd", "1000y", 0, true},
		{"empty", "", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseHorizon(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("ParseHorizon(%q) error = %v, want error %v", tt.in, err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("ParseHorizon(%q) = %d, want %d", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseSpecs(t *testing.T) {
	for _, tt := range []struct {
		name string
		s    Specs
		spec string // the SpecError's Spec
	}{
		{"bad add", Specs{Add: []string{"H100"}}, "add"},
		{"add zero", Specs{Add: []string{"0xH100"}}, "add"},
		{"remove with partition", Specs{Remove: []string{"1xA100:gpu"}}, "remove"},
		{"bare growth", Specs{Growth: "30", Horizon: "12mo"}, "growth"},
		{"growth to nothing", Specs{Growth: "-100%", Horizon: "12mo"}, "growth"},
		{"bad horizon", Specs{Growth: "30%", Horizon: "12"}, "horizon"},
		{"bad partition", Specs{Partitions: []string{"debug"}}, "partition"},
		{"bad qos", Specs{QOS: []string{"normal:MaxBogus=1"}}, "qos"},
		{"bad node", Specs{Nodes: []string{"gpu01"}}, "node"},
		{"bad node list", Specs{Nodes: []string{"gpu[02-01]:4xh100"}}, "node"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var p WhatIfParams
			err := ParseSpecs(tt.s, &p)
			var se *SpecError
			if !errors.As(err, &se) || se.Spec != tt.spec {
				t.Errorf("ParseSpecs(%+v) = %v, want a SpecError of %q", tt.s, err, tt.spec)
			}
		})
	}
	s := Specs{Add: []string{"2xH100:gpu"}, Remove: []string{"1xa100"}, Growth: "30%", Horizon: "1y",
		Nodes: []string{"gpu[01-02]:4xh100"}, Partitions: []string{"debug:Nodes=gpu01,MaxTime=1:00:00"}, QOS: []string{"normal:MaxTRESPerUser=gres/gpu=4"}}
	var p WhatIfParams
	if err := ParseSpecs(s, &p); err != nil {
		t.Fatal(err)
	}
	if len(p.Changes) != 4 || p.Months != 12 || p.Growth != 0.3 || len(p.FlagNodes) != 2 {
		t.Fatalf("params = %+v", p)
	}
	kinds := []string{analysis.ChangeAdd, analysis.ChangeRemove, analysis.ChangePartition, analysis.ChangeQOS}
	for i, k := range kinds {
		if p.Changes[i].Kind != k || p.Changes[i].Spec == "" {
			t.Errorf("change %d = %+v, want kind %v with its spec", i, p.Changes[i], k)
		}
	}
	if c := p.Changes[0]; c.Count != 2 || c.Model != "H100" || c.Partition != "gpu" {
		t.Errorf("--add 2xH100:gpu = %+v", c)
	}
	if n := p.FlagNodes[1]; n.Name != "gpu02" || n.GPUs != 4 || n.GPUModel != "h100" || n.Partitions != nil {
		t.Errorf("node = %+v", n)
	}
}
