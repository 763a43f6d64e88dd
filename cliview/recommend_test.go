package cliview

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gpuprof/gpuprof/analysis"
)

// TestRecommendWords: one job on one node is written in the singular, a
// confidence as the report writes a percentage, "92 %", and a rule's
// code in words.
func TestRecommendWords(t *testing.T) {
	var b bytes.Buffer
	f := analysis.Findings{Recommendations: []analysis.Recommendation{{ID: "share-gpus", Title: "Share GPUs", Change: "add shards", Confidence: 0.92}}}
	f.Summary.Jobs, f.Summary.WithGPUData = 1, 1
	f.NoChange = []analysis.NoChange{{Rule: "debug_partition", Note: "no debug partition"}}
	WriteRecommendations(&b, analysis.Input{Nodes: []analysis.Node{{Name: "gpu01"}}}, f, nil)
	out := b.String()
	for _, want := range []string{"Recommendations from 1 job (1 with GPU readings) on 1 GPU node.", "Confidence: 92 %", "- debug partition: no debug partition"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
