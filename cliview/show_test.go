package cliview

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/store"
)

// The CPU line says why an efficiency cannot be computed.
func TestHostUsageLines(t *testing.T) {
	start := time.Date(2026, 11, 3, 13, 0, 0, 0, time.UTC)
	cpu := slurmext.HostUsage{TotalCPU: 90 * time.Minute, TotalCPUValid: true}
	tests := []struct {
		name string
		r    *slurmext.JobRecord
		want []string
	}{
		{"no scheduler record", nil, []string{
			"CPU efficiency unknown: TotalCPU not imported (sacct -j 9 -o TotalCPU shows it)",
			"host memory peak unknown: MaxRSS not imported (sacct -j 9 -o MaxRSS shows it)"}},
		{"all known", &slurmext.JobRecord{JobID: "9", Start: start, End: start.Add(time.Hour), CPUs: 2, Usage: slurmext.HostUsage{
			TotalCPU: 90 * time.Minute, TotalCPUValid: true, MemPeak: 3 << 29, MemPeakValid: true, ReqMem: 4 << 30, ReqMemValid: true}},
			[]string{"CPU efficiency 75 % (01:30:00 of 02:00:00 core time)", "host memory peak 1.5 GiB of 4 GiB requested (38 %)"}},
		{"no run time", &slurmext.JobRecord{JobID: "9", Start: start, End: start, CPUs: 2, Usage: cpu},
			[]string{"CPU efficiency unknown (01:30:00 of CPU time, but no run time to compare it with)",
				"host memory peak unknown: MaxRSS not imported (sacct -j 9 -o MaxRSS shows it)"}},
		{"CPUs unknown, request from ReqTRES", &slurmext.JobRecord{JobID: "9", Start: start, End: start.Add(time.Hour), Usage: slurmext.HostUsage{
			TotalCPU: 90 * time.Minute, TotalCPUValid: true, MemPeak: 1 << 30, MemPeakValid: true}, ReqTRES: "cpu=2,mem=2G"},
			[]string{"CPU efficiency unknown (01:30:00 of CPU time, but the number of CPUs allocated is unknown)",
				"host memory peak 1 GiB of 2 GiB requested (50 %)"}},
		{"request unknown", &slurmext.JobRecord{JobID: "9", Usage: slurmext.HostUsage{MemPeak: 1 << 30, MemPeakValid: true}},
			[]string{"CPU efficiency unknown: TotalCPU not imported (sacct -j 9 -o TotalCPU shows it)",
				"host memory peak 1 GiB (the request is unknown)"}},
		// Issue #30: the import read the job's steps and sacct had no
		// MaxRSS or TotalCPU for it: unknown, with no command that would
		// show nothing either.
		{"imported, sacct had none", &slurmext.JobRecord{JobID: "9", Start: start, End: start.Add(time.Hour), CPUs: 2,
			Usage: slurmext.HostUsage{TotalCPURead: true, MemPeakRead: true, ReqMem: 4 << 30, ReqMemValid: true}},
			[]string{"CPU efficiency unknown: Slurm's accounting recorded no CPU time for it (TotalCPU empty)",
				"host memory peak unknown: Slurm's accounting recorded none (MaxRSS empty); 4 GiB requested"}},
		{"peak imported empty, no request", &slurmext.JobRecord{JobID: "9", Usage: slurmext.HostUsage{MemPeakRead: true}},
			[]string{"CPU efficiency unknown: TotalCPU not imported (sacct -j 9 -o TotalCPU shows it)",
				"host memory peak unknown: Slurm's accounting recorded none (MaxRSS empty)"}},
	}
	for _, tt := range tests {
		v := store.JobView{Cluster: "lab", JobID: "9", Sched: tt.r}
		if got := hostUsageLines(v); strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, got, tt.want)
		}
	}
}

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
	got := noticeLines(j.Notices)
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
	if got := noticeLines(nil); got != nil {
		t.Errorf("no notices: %q, want none", got)
	}
}
