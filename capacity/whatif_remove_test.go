package capacity

import (
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
)

// TestRemoveModelTheClusterLacks: --remove of a model the cluster has none
// of says so and names the GPUs it has, instead of "8 fewer GPUs of H100
// than that" (issue #38).
func TestRemoveModelTheClusterLacks(t *testing.T) {
	from := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	in := analysis.Input{Window: analysis.Window{From: from, To: from.Add(2 * time.Hour)},
		Nodes: []analysis.Node{{Name: "n1", GPUModel: "NVIDIA A100-SXM4-40GB", GPUs: 8, Partitions: []string{"gpu"}},
			{Name: "n2", GPUModel: "Tesla T4", GPUs: 2, Partitions: []string{"gpu"}}}}
	for i := range 10 {
		at := from.Add(time.Duration(i) * 5 * time.Minute)
		in.Jobs = append(in.Jobs, analysis.Job{ID: string(rune('a' + i)), User: "u", Partition: "gpu", State: "COMPLETED",
			Submit: at, Eligible: at, Start: at, End: at.Add(2 * time.Minute), TimeLimit: 5 * time.Minute,
			ReqGPUs: 1, NodeCount: 1, NodeList: "n1"})
	}
	_, err := RunWhatIf(in, WhatIfParams{Seeds: 1, Changes: []analysis.Change{{Kind: analysis.ChangeRemove, Count: 8, Model: "H100", Spec: "8xH100"}}})
	if err == nil || !strings.Contains(err.Error(), "no GPU of model H100; it has 8 NVIDIA A100-SXM4-40GB, 2 Tesla T4") {
		t.Errorf("error %v, want it to say the cluster has no H100 and which GPUs it has", err)
	}
	// A model it has, but fewer than asked: the count it lacks.
	_, err = RunWhatIf(in, WhatIfParams{Seeds: 1, Changes: []analysis.Change{{Kind: analysis.ChangeRemove, Count: 4, Model: "T4", Spec: "4xT4"}}})
	if err == nil || !strings.Contains(err.Error(), "2 fewer GPUs of T4") {
		t.Errorf("error %v, want 2 fewer GPUs of T4", err)
	}
}
