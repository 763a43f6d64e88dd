package main

import (
	"errors"
	"testing"
)

func TestWhatifFlagErrors(t *testing.T) {
	for _, tt := range []struct {
		name string
		o    whatifOptions
	}{
		{"no seeds", whatifOptions{Seeds: 0}},
		{"bad add", whatifOptions{Seeds: 1, Add: []string{"H100"}}},
		{"add zero", whatifOptions{Seeds: 1, Add: []string{"0xH100"}}},
		{"remove with partition", whatifOptions{Seeds: 1, Remove: []string{"1xA100:gpu"}}},
		{"growth alone", whatifOptions{Seeds: 1, Growth: "30%"}},
		{"bare growth", whatifOptions{Seeds: 1, Growth: "30", Horizon: "12mo"}},
		{"month and since", whatifOptions{Seeds: 1, Month: "2026-11", Since: "2026-11-01"}},
		{"bad partition", whatifOptions{Seeds: 1, Partitions: []string{"debug"}}},
		{"bad qos", whatifOptions{Seeds: 1, QOS: []string{"normal:MaxBogus=1"}}},
		{"bad node", whatifOptions{Seeds: 1, Nodes: []string{"gpu01"}}},
		{"job starts as text", whatifOptions{Seeds: 1, JobStarts: true}},
		{"job starts with growth", whatifOptions{Seeds: 1, JSON: true, JobStarts: true, Growth: "30%", Horizon: "12mo"}},
	} {
		_, _, err := tt.o.params()
		var u usageError
		if err == nil || !errors.As(err, &u) {
			t.Errorf("%s: err = %v, want a usage error", tt.name, err)
		}
	}
	o := whatifOptions{Seeds: 3, Add: []string{"2xH100:gpu"}, Remove: []string{"1xa100"}, Growth: "30%", Horizon: "1y",
		Nodes: []string{"gpu[01-02]:4xh100"}, Partitions: []string{"debug:Nodes=gpu01,MaxTime=1:00:00"}, QOS: []string{"normal:MaxTRESPerUser=gres/gpu=4"}}
	p, _, err := o.params()
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Changes) != 4 || p.Changes[0].Count != 2 || p.Changes[0].Partition != "gpu" || p.Months != 12 || p.Growth != 0.3 || len(p.FlagNodes) != 2 {
		t.Errorf("params = %+v", p)
	}
}
