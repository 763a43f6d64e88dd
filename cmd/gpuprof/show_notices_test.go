package main

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/profile"
)

func TestNoticeLines(t *testing.T) {
	at := time.Date(2026, 12, 3, 14, 2, 11, 0, time.Local)
	stamp := at.Format("2006-01-02T15:04:05") // sacct's form, local
	idle := "GPU 1 idle for 45 min: no process, utilisation 0 %, memory 0 B"
	j := profile.Job{Notices: []profile.Notice{
		{Rule: profile.RuleIdleGPU, Status: profile.NoticeSent, Time: at, GPUs: []int{1}, Evidence: idle,
			Fix: "#SBATCH --gres=gpu:1"},
		{Rule: profile.RuleOversized, Status: profile.NoticeCapped, Time: at.Add(time.Hour), Evidence: "peak 3 GiB of 80 GiB"},
		// Text from a job (its name in the evidence) must not reach the
		// terminal as escape sequences or line breaks.
		{Rule: profile.RuleIdleJob, Status: profile.NoticeSent, Time: at, Evidence: "job \x1b[31mred\x1b[0m\r\nBcc: x@y idle",
			Fix: "--gres=gpu:1\x1b]0;title\a"},
	}}
	got := noticeLines(j)
	want := []string{
		"notice sent " + stamp + ": " + idle,
		"  next time: #SBATCH --gres=gpu:1",
		"notice not sent " + at.Add(time.Hour).Format("2006-01-02T15:04:05") + " (daily cap): peak 3 GiB of 80 GiB",
	}
	if len(got) != 5 || !slices.Equal(got[:3], want) {
		t.Fatalf("noticeLines =\n%s\nwant first\n%s\nand 2 lines of the hostile notice", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, l := range got[3:] {
		if strings.ContainsAny(l, "\x1b\r\n\a") {
			t.Errorf("line %q carries a control character", l)
		}
	}
	if !strings.HasPrefix(got[3], "notice sent "+stamp+": job ") || !strings.Contains(got[3], "red") {
		t.Errorf("hostile notice line = %q, want its text kept, without controls", got[3])
	}
	if got := noticeLines(profile.Job{}); got != nil {
		t.Errorf("no notices: %q, want none", got)
	}
}
