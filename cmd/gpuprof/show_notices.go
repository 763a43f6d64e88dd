package main

import (
	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/cliview"
	"github.com/gpuprof/gpuprof/profile"
)

// noticeLines are the lines gpuprof show prints for the notices decided
// for j on its node, oldest first: one line each in analysis.NoticeLine's
// words ("notice sent 2026-12-03T14:02:11: GPU 1 idle for 45 min: …",
// "notice not sent … (daily cap): …"), followed, when the notice named
// one, by an indented line with the sbatch option that would avoid it.
// Instants are local, as everywhere in show; the text is made safe for a
// terminal. None when j has no notice.
func noticeLines(j profile.Job) []string {
	var out []string
	for _, n := range j.Notices {
		out = append(out, cliview.Clean(analysis.NoticeLine(n, nil), 600))
		if n.Fix != "" {
			out = append(out, "  next time: "+cliview.Clean(n.Fix, 200))
		}
	}
	return out
}
