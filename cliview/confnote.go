package cliview

import (
	"io"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/termtext"
)

// WriteConfNote writes the one line on a slurm.conf not used, if any
// (docs/configuration.md, "Which slurm.conf describes a cluster"), before
// an analysis command's answer.
func WriteConfNote(w io.Writer, use analysis.ConfUse) {
	if use.NotUsed != "" {
		printf(w, "Note: %s.\n", termtext.Clean(use.NotUsed))
	}
}
