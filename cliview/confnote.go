package cliview

import (
	"io"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/termtext"
)

// WriteConfNote writes the one line on a slurm.conf not used, if any
// (docs/configuration.md, "Which slurm.conf describes a cluster"), before
// an analysis command's answer, and, when the nodes and partitions came
// from the live cluster (slurm_source), a line that says so.
func WriteConfNote(w io.Writer, use analysis.ConfUse) {
	if use.Source == "scontrol" {
		printf(w, "Slurm configuration: the live cluster %s (scontrol), not the files.\n", termtext.Clean(use.Cluster))
	}
	if use.NotUsed != "" {
		printf(w, "Note: %s.\n", termtext.Clean(use.NotUsed))
	}
}
