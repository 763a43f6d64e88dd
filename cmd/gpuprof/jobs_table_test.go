package main

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
)

// TestJobsTableWidth: `gpuprof jobs` with 4-GPU jobs, CJK and emoji names
// (two terminal cells a character) and long users fits 120 columns, keeps
// every column at the same display offset on every line, writes one value
// for memory and utilisation (the largest, "×4"), and durations as Slurm
// does.
func TestJobsTableWidth(t *testing.T) {
	start := time.Now().Add(-48 * time.Hour).Truncate(time.Minute)
	db := reportDB(t,
		reportJob{id: "4001", user: "alice", account: "vision", name: "训练大模型实验第一轮", start: start, run: 26*time.Hour + 5*time.Second, wait: 90 * time.Minute, util: 70, gpus: 4},
		reportJob{id: "4002", user: "bartholomew-long", account: "nlp-research", name: "🚀rocket-launch-sweep", start: start.Add(time.Hour), run: 3 * time.Hour, wait: 5 * time.Second, util: 35, gpus: 4, node: "gpu02"},
		reportJob{id: "4003", user: "chen", account: "bio", name: "plain", start: start.Add(2 * time.Hour), run: 40 * time.Minute, util: 90},
	)
	out, err := runCLI(t, "jobs", "--db", db)
	if err != nil {
		t.Fatalf("jobs: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d lines, want a header and 3 jobs:\n%s", len(lines), out)
	}
	// The display offset where each line's START value begins: the same
	// on every line when padding counts display cells.
	offset := func(line, field string) int {
		i := strings.Index(line, field)
		if i < 0 {
			t.Fatalf("line lacks %q: %q", field, line)
		}
		return ansi.StringWidth(line[:i])
	}
	want := offset(lines[0], "START")
	for _, l := range lines {
		if w := ansi.StringWidth(l); w > 120 {
			t.Errorf("line is %d cells wide, want ≤ 120: %q", w, l)
		}
	}
	day := start.Local().Format("01-02 ")
	for _, l := range lines[1:] {
		if got := offset(l, day); got != want {
			t.Errorf("START at cell %d, header's at %d: columns shifted by a wide name\n%s", got, want, out)
		}
	}
	for _, s := range []string{"1-02:00:05", "01:30:00", "×4", "20.0×4", "70%×4"} {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q:\n%s", s, out)
		}
	}
	if strings.Contains(out, "20.0,20.0") || strings.Contains(out, "70%,70%") {
		t.Errorf("values per GPU, want one per job:\n%s", out)
	}
}
