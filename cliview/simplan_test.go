package cliview

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gpuprof/gpuprof/capacity"
)

// TestSimPlanNoRecommendation: a replayed plan without a recommendation
// keeps its section 1, saying there was none to replay, as the report does
// (issue #38: the CLI skipped from its verdict to section 2).
func TestSimPlanNoRecommendation(t *testing.T) {
	sp := capacity.SimPlan{Simulated: true, Months: 12, Seeds: 3}
	var b bytes.Buffer
	WriteSimPlan(&b, sp, nil)
	out := b.String()
	one, two := strings.Index(out, "\n1. Policy changes: no recommendation to replay"), strings.Index(out, "\n2. Purchase")
	if one < 0 || two < 0 || one > two {
		t.Errorf("sections 1 and 2 not in order, section 1 saying there was nothing to replay:\n%s", out)
	}
}
