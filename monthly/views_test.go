package monthly

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/jobsource"
	"github.com/gpuprof/gpuprof/notice"
	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/store"
)

// TestDigestReadsTheDayOnce: the admins' digest reads its day through
// the Scope once (lean, with the command's clock), with the notices of
// the same pass, lists them oldest first, and refuses anyone but an
// admin before reading.
func TestDigestReadsTheDayOnce(t *testing.T) {
	day := analysis.Window{From: time.Date(2026, 10, 5, 0, 0, 0, 0, time.UTC), To: time.Date(2026, 10, 6, 0, 0, 0, 0, time.UTC)}
	start := day.From.Add(8 * time.Hour)
	job := analysis.Job{Cluster: "lab", ID: "101", User: "alice", State: "COMPLETED", Submit: start, Start: start, End: start.Add(time.Hour),
		ReqGPUs: 1, HasGPUData: true, GPUs: []analysis.GPU{{Node: "gpu01", IdleFraction: 1, IdleValid: true, IdleAllocation: true}}}
	row := func(rule string, at time.Duration) notice.Row {
		return notice.Row{Cluster: "lab", SlurmID: "101", User: "alice", Notice: profile.Notice{Rule: rule, Status: profile.NoticeSent, Time: start.Add(at)}}
	}
	src := &fakeSource{jobs: map[string][]analysis.Job{"2026-10": {job}},
		rows: []notice.Row{row(profile.RuleIdleJob, 30*time.Minute), row(profile.RuleIdleGPU, 10*time.Minute)}}
	now := day.To.Add(7 * time.Hour)

	if _, err := Digest(context.Background(), jobsource.NewScope(store.Caller{UID: 1001, User: "ann"}, "", "/db", src), day, now, analysis.DefaultConfig()); err == nil ||
		!strings.Contains(err.Error(), "gpuprof notices digest names every user's idle GPUs") || len(src.queries) != 0 {
		t.Fatalf("a user's digest: %v after %d reads, want the admin sentence before any", err, len(src.queries))
	}
	d, err := Digest(context.Background(), jobsource.NewScope(store.Caller{Admin: true}, "", "/db", src), day, now, analysis.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if len(src.queries) != 1 || !src.queries[0].Lean || !src.queries[0].Now.Equal(now) || src.queries[0].Window != day {
		t.Errorf("queries = %+v, want one lean read of the day at %v", src.queries, now)
	}
	if len(d.Notices) != 2 || d.Notices[0].Rule != profile.RuleIdleGPU || d.Jobs != 1 || len(d.Users) != 1 || d.Users[0].Notices != 2 {
		t.Errorf("digest = %+v, want job 101 and its two notices, the idle_gpu one first", d)
	}
}

// TestSummaryMonthCountsThenReadsNewest: the TUI's month is counted,
// then its newest jobs read with the count, the clock and the binding
// after the read (jobsource.Query.ConfOfRead), for the user asked.
func TestSummaryMonthCountsThenReadsNewest(t *testing.T) {
	month := analysis.Window{From: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), To: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
	src := &fakeSource{jobs: map[string][]analysis.Job{"2026-11": {{ID: "1"}, {ID: "2"}, {ID: "3"}}}}
	now := month.From.AddDate(0, 0, 9)
	r, err := SummaryMonth(context.Background(), jobsource.NewScope(store.Caller{UID: 1001, User: "ann"}, "", "/db", src), "ann", month, now, 2)
	if err != nil {
		t.Fatal(err)
	}
	if r.Total != 3 || len(src.counts) != 1 || len(src.queries) != 1 {
		t.Fatalf("total %d after %d counts and %d reads, want 3 after one of each", r.Total, len(src.counts), len(src.queries))
	}
	q := src.queries[0]
	if q.User != "ann" || q.Window != month || !q.Now.Equal(now) || q.Jobs != 3 || q.Newest != 2 || !q.ConfOfRead {
		t.Errorf("read %+v, want ann's month at %v, counted 3, the newest 2, bound after the read", q, now)
	}
}
