package report

import (
	"strings"
	"testing"

	"github.com/gpuprof/gpuprof/analysis"
)

// TestBlankNamesShown: jobs of a user with no Slurm account and jobs
// submitted with an empty name head their rows with "(no account)" and
// "(no name)" in By account, Energy by account and the task table — a
// blank first cell read as a missing row (issue 40: a month's top task
// had no name).
func TestBlankNamesShown(t *testing.T) {
	in := plantedInput()
	blanked := 0
	for i := range in.Jobs {
		j := &in.Jobs[i]
		if j.User == "ann" {
			j.Account, j.Name = "", ""
			blanked++
		}
	}
	if blanked == 0 {
		t.Fatal("the planted month has no job of ann's to blank")
	}
	d, err := analysedMonth(in, analysis.DefaultConfig(), october)
	if err != nil {
		t.Fatal(err)
	}
	md := renderAll(t, d)["md"]
	for _, section := range []string{"### By account", "### Energy by account", "## Top task profiles"} {
		i := strings.Index(md, section)
		if i < 0 {
			t.Errorf("no %q section", section)
			continue
		}
		body := md[i:]
		if j := strings.Index(body[len(section):], "\n#"); j >= 0 {
			body = body[:len(section)+j]
		}
		if !strings.Contains(body, "(no account)") {
			t.Errorf("%s names no \"(no account)\" row:\n%s", section, body)
		}
		if strings.Contains(body, "\n|  |") {
			t.Errorf("%s has a row with a blank first cell:\n%s", section, body)
		}
		if section == "## Top task profiles" && !strings.Contains(body, "(no name)") {
			t.Errorf("the task table names no \"(no name)\" task:\n%s", body)
		}
	}
}
