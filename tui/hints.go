package tui

import (
	"github.com/gpuprof/gpuprof/analysis"
)

// hint is one change a user could make to a job's next submission: the
// option to write and why, with the rule that suggested it. Its strings
// are sanitised when rendered: they may quote job data.
type hint struct{ option, why, rule string }

// jobHints returns the analysis' hints for j (analysis.Hints).
func jobHints(j analysis.Job, c analysis.Config) []hint {
	var hs []hint
	for _, h := range analysis.Hints(j, c) {
		hs = append(hs, hint{option: h.Option, why: h.Why, rule: h.Rule})
	}
	return hs
}
