package tui

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/profile"
)

// The detail lists a job's notices in show's words, with their fixes,
// and has no Notices section for a job without one.
func TestDetailNotices(t *testing.T) {
	jobs := genJobs(3)
	at := time.Date(2026, 11, 20, 9, 2, 11, 0, time.UTC)
	jobs[1].Profiles[0].Notices = []profile.Notice{
		{Rule: profile.RuleIdleGPU, Status: profile.NoticeSent, Time: at, GPUs: []int{1},
			Evidence: "GPU 1 idle for 45 min: no process, utilisation 0 %, memory 0 B", Fix: "#SBATCH --gres=gpu:1"},
		{Rule: profile.RuleOversized, Status: profile.NoticeCapped, Time: at.Add(time.Hour), Evidence: "peak 3 GiB of 80 GiB"},
	}
	src := &fakeSource{jobs: jobs, user: "alice"}
	m := New(context.Background(), src, alice, Options{NoColor: true, Now: func() time.Time { return testNow }})
	m = drive(t, m, m.Init())
	m = send(t, m, tea.WindowSizeMsg{Width: 120, Height: 40})

	m = press(t, m, "down", "enter")
	lines := m.detailLines()
	at0 := slices.IndexFunc(lines, func(l string) bool { return strings.TrimSpace(l) == "Notices" })
	if at0 < 0 {
		t.Fatalf("the detail of a job with notices has no Notices section:\n%s", strings.Join(lines, "\n"))
	}
	want := []string{
		" • notice sent 2026-11-20T09:02:11: GPU 1 idle for 45 min: no process, utilisation 0 %, memory 0 B",
		"   next time: #SBATCH --gres=gpu:1",
		" • notice not sent 2026-11-20T10:02:11 (daily cap): peak 3 GiB of 80 GiB",
	}
	if got := lines[at0+1 : at0+4]; !slices.Equal(got, want) {
		t.Errorf("notice lines =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	m = press(t, m, "esc", "up", "enter")
	for _, l := range m.detailLines() {
		if strings.TrimSpace(l) == "Notices" {
			t.Errorf("a job without notices shows a Notices section:\n%s", strings.Join(m.detailLines(), "\n"))
		}
	}
}

// A job on several nodes names the node of each notice.
func TestNoticeLinesNodes(t *testing.T) {
	at := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	ps := []profile.Job{
		{Key: profile.Key{Node: "gpu01"}, Notices: []profile.Notice{{Rule: profile.RuleIdleJob, Status: profile.NoticeSent, Time: at, Evidence: "idle"}}},
		{Key: profile.Key{Node: "gpu\x1b[31m02"}, Notices: []profile.Notice{{Rule: profile.RuleCancel, Status: profile.NoticeCanceled, Time: at, Evidence: "idle 40 min"}}},
	}
	got := noticeLines(analysis.ExamineView(nil, ps, analysis.DefaultConfig(), nil).Nodes, time.UTC)
	want := []string{"• gpu01: notice sent 2026-11-20T09:00:00: idle", "• gpu02: job cancelled 2026-11-20T09:00:00: idle 40 min"}
	if !slices.Equal(got, want) {
		t.Errorf("noticeLines = %q, want %q", got, want)
	}
}
