package report

import (
	"html"
	"strings"
	"testing"

	"github.com/gpuprof/gpuprof/analysis"
)

// TestSlurmConfNoteFirst: a slurm.conf left aside (another cluster's) is
// said in the headline, before the figures that would have rested on it,
// in the Markdown and the HTML alike — not only under Methods (issue 38,
// item 11).
func TestSlurmConfNoteFirst(t *testing.T) {
	d, err := analysedMonth(plantedInput(), analysis.DefaultConfig(), october)
	if err != nil {
		t.Fatal(err)
	}
	const note = "slurm.conf /etc/slurm/slurm.conf is cluster lab2's, the jobs are planted's: not used"
	d.Workload.Conf.NotUsed = note
	out := renderAll(t, d)
	for _, format := range []string{"md", "html"} {
		text, want := out[format], note
		if format == "html" {
			want = html.EscapeString(note)
		}
		i, j := strings.Index(text, want), strings.Index(text, "GPU-hours allocated")
		if i < 0 || j < 0 || i > j {
			t.Errorf("%s: the note at %d, the first figure at %d; want the note before the headline's figures", format, i, j)
		}
	}
	d.Workload.Conf.NotUsed = ""
	if strings.Contains(renderAll(t, d)["md"], "not used") {
		t.Error("a note without a slurm.conf left aside")
	}
}
