package main

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/gpu"
	"github.com/gpuprof/gpuprof/jobsource"
	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/store"
)

// noticesBase is the day of the notices fixture: 2026-10-05 08:00 UTC.
var noticesBase = time.Date(2026, 10, 5, 8, 0, 0, 0, time.UTC)

// noticeFixtureJob is one job of the notices fixture: an hour of
// readings, one a minute, at util[k] % on GPU k (0 %: no process, no
// memory), and the notices its agent recorded.
type noticeFixtureJob struct {
	id, user string
	uid      int
	sched    *slurmext.JobRecord
	start    time.Time
	util     []uint32
	notices  []profile.Notice
}

// noticesUTC makes local time UTC for the test, so that printed instants
// are the same on every host.
func noticesUTC(t *testing.T) {
	t.Setenv("TZ", "UTC")
	loc := time.Local
	time.Local = time.UTC
	t.Cleanup(func() { time.Local = loc })
}

func noticeFixture() []noticeFixtureJob {
	b := noticesBase
	rec := func(id, display, name, user string, uid int, start time.Time) *slurmext.JobRecord {
		return &slurmext.JobRecord{Cluster: "lab", JobID: id, DisplayID: display, ArrayTaskID: -1, HetOffset: -1,
			Name: name, User: user, UID: uid, Account: "vision", Partition: "gpu", State: "COMPLETED", CancelledBy: -1,
			Submit: start, Start: start, End: start.Add(time.Hour), TimeLimit: 4 * time.Hour, Source: "sacct"}
	}
	arr := rec("103", "90_3", "sweep", "bob", 1002, b.Add(3*time.Hour))
	arr.ArrayJobID, arr.ArrayTaskID = "90", 3
	return []noticeFixtureJob{
		{id: "101", user: "alice", uid: 1001, sched: rec("101", "101", "train", "alice", 1001, b), start: b, util: []uint32{80, 0},
			notices: []profile.Notice{
				{Rule: profile.RuleIdleGPU, Time: b.Add(30 * time.Minute), Since: b, GPUs: []int{1}, Recipient: "alice@example.org",
					Status: profile.NoticeSent, Evidence: "GPU 1 idle for 30 min: no process, utilisation 0 %, memory 0 B",
					Fix: "#SBATCH --gres=gpu:1"},
				{Rule: profile.RuleOversized, Time: b.Add(50 * time.Minute), Since: b, GPUs: []int{0},
					Status: profile.NoticeCapped, Evidence: "peak 0.0 GiB of 80 GiB on GPU 0"},
			}},
		{id: "102", user: "bob", uid: 1002, start: b.Add(2 * time.Hour), util: []uint32{0},
			notices: []profile.Notice{
				{Rule: profile.RuleIdleJob, Time: b.Add(2*time.Hour + 25*time.Minute), Since: b.Add(2 * time.Hour), GPUs: []int{0},
					Recipient: "bob@example.org", Status: profile.NoticeSent, Evidence: "every GPU idle for 25 min"},
			}},
		{id: "103", user: "bob", uid: 1002, sched: arr, start: b.Add(3 * time.Hour), util: []uint32{50},
			notices: []profile.Notice{
				{Rule: profile.RuleCancel, Time: b.Add(3*time.Hour + 40*time.Minute), GPUs: []int{0},
					Status: profile.NoticeCanceled, Evidence: "idle 40 min after the warning", Detail: "scancel --signal=TERM then scancel"},
			}},
		{id: "104", user: "alice", uid: 1001, sched: rec("104", "104", "old", "alice", 1001, b.AddDate(0, 0, -1)),
			start: b.AddDate(0, 0, -1), util: []uint32{90},
			notices: []profile.Notice{
				{Rule: profile.RuleIdleGPU, Time: b.AddDate(0, 0, -1).Add(10 * time.Minute), GPUs: []int{0},
					Recipient: "alice@example.org", Status: profile.NoticeSent, Evidence: "GPU 0 idle for 10 min"},
			}},
	}
}

// noticesDB writes the fixture through the real store and returns the
// database's path and the store, open.
func noticesDB(t *testing.T) (string, *store.DB) {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "notices.db")
	db, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	for _, j := range noticeFixture() {
		p := profile.Job{Key: profile.Key{Cluster: "lab", JobID: j.id, Node: "gpu01"}, User: j.user, UID: j.uid, GID: j.uid,
			Start: j.start, Status: profile.StatusRunning, Source: profile.SourceAgent, SampleInterval: time.Minute,
			Notices: j.notices}
		for k, u := range j.util {
			d := gpu.Device{UUID: "GPU-" + j.id + "-" + string(rune('a'+k)), Minor: k, Name: "NVIDIA H100 80GB HBM3", MemoryTotal: 80 << 30}
			g := profile.NewGPU(d, k, j.start, time.Minute, 0)
			for i := range 60 {
				r := profile.Reading{Time: j.start.Add(time.Duration(i) * time.Minute), Util: gpu.Some(u), MemUsed: gpu.Some(uint64(0))}
				if u > 0 {
					r.MemUsed, r.Processes = gpu.Some(uint64(4)<<30), 1
				}
				g.Observe(r, time.Minute)
			}
			p.GPUs = append(p.GPUs, g)
		}
		p.LastSample = j.start.Add(time.Hour)
		p.ExitKnown = true
		p.Finish(j.start.Add(time.Hour))
		if err := db.PutJob(ctx, p); err != nil {
			t.Fatal(err)
		}
		if j.sched != nil {
			if err := db.PutSchedJob(ctx, *j.sched); err != nil {
				t.Fatal(err)
			}
		}
	}
	return path, db
}

func noticesJSON(t *testing.T, args ...string) []noticeRow {
	t.Helper()
	out, err := runCLI(t, append([]string{"notices", "--json"}, args...)...)
	if err != nil {
		t.Fatalf("notices --json %v: %v\n%s", args, err, out)
	}
	var rows []noticeRow
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("notices --json: %v\n%s", err, out)
	}
	return rows
}

func rowKeys(rows []noticeRow) []string {
	var s []string
	for _, r := range rows {
		s = append(s, r.SlurmID+"/"+r.Rule)
	}
	return s
}

func TestNoticesCommand(t *testing.T) {
	noticesUTC(t)
	path, _ := noticesDB(t)
	tests := []struct {
		name string
		args []string
		want []string // slurm id/rule, newest first
	}{
		{"every notice, newest first", nil,
			[]string{"90_3/cancel", "102/idle_job", "101/oversized", "101/idle_gpu", "104/idle_gpu"}},
		{"since the day began", []string{"--since", "2026-10-05"},
			[]string{"90_3/cancel", "102/idle_job", "101/oversized", "101/idle_gpu"}},
		{"until a time: notices decided before it", []string{"--since", "2026-10-05", "--until", "2026-10-05T10:25:00"},
			[]string{"101/oversized", "101/idle_gpu"}},
		{"one rule", []string{"--rule", "idle_gpu"}, []string{"101/idle_gpu", "104/idle_gpu"}},
		{"one user, known from the profile alone too", []string{"--user", "bob"}, []string{"90_3/cancel", "102/idle_job"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := noticesJSON(t, append([]string{"--db", path}, tc.args...)...)
			if !slices.Equal(rowKeys(got), tc.want) {
				t.Errorf("notices %v = %v, want %v", tc.args, rowKeys(got), tc.want)
			}
		})
	}

	// The JSON element: the job beside every field of the notice.
	rows := noticesJSON(t, "--db", path, "--rule", "idle_gpu", "--since", "2026-10-05")
	if len(rows) != 1 {
		t.Fatalf("got %d rows, want 1", len(rows))
	}
	r := rows[0]
	if r.Cluster != "lab" || r.JobID != "101" || r.Node != "gpu01" || r.User != "alice" || r.JobName != "train" ||
		r.Recipient != "alice@example.org" || r.Status != profile.NoticeSent || !slices.Equal(r.GPUs, []int{1}) ||
		!r.Time.Equal(noticesBase.Add(30*time.Minute)) || !r.Since.Equal(noticesBase) || r.Fix != "#SBATCH --gres=gpu:1" {
		t.Errorf("row = %+v", r)
	}
	raw, err := runCLI(t, "notices", "--json", "--db", path, "--rule", "idle_gpu", "--since", "2026-10-05")
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"rule": "idle_gpu"`, `"slurm_id": "101"`, `"time": "2026-10-05T08:30:00Z"`, `"evidence": "GPU 1 idle`} {
		if !strings.Contains(raw, key) {
			t.Errorf("notices --json lacks %s:\n%s", key, raw)
		}
	}

	// Nothing selected: an empty array, not null.
	if out, err := runCLI(t, "notices", "--json", "--db", path, "--rule", "unused_gpus"); err != nil || strings.TrimSpace(out) != "[]" {
		t.Errorf("no match: %q, %v; want []", out, err)
	}
}

func TestNoticesText(t *testing.T) {
	noticesUTC(t)
	path, _ := noticesDB(t)
	out, err := runCLI(t, "notices", "--db", path, "--since", "2026-10-05")
	if err != nil {
		t.Fatalf("notices: %v\n%s", err, out)
	}
	want := []string{
		"2026-10-05T11:40:00  job 90_3 (raw id 103) on gpu01  user bob  idle job cancel action  GPU 0  job cancelled\n" +
			"    job name:  sweep\n" +
			"    seen:      idle 40 min after the warning\n" +
			"    detail:    scancel --signal=TERM then scancel\n",
		"2026-10-05T08:30:00  job 101 on gpu01  user alice  idle GPU  GPU 1  sent to alice@example.org\n" +
			"    job name:  train\n" +
			"    seen:      GPU 1 idle for 30 min: no process, utilisation 0 %, memory 0 B\n" +
			"    since:     2026-10-05T08:00:00\n" +
			"    next time: #SBATCH --gres=gpu:1\n",
		"2026-10-05T08:50:00  job 101 on gpu01  user alice  small share of a large GPU  GPU 0  not sent: daily cap\n",
		"\n4 notices: 2 sent, 1 job cancelled, 1 not sent: daily cap\n",
	}
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("notices output lacks\n%s\ngot\n%s", w, out)
		}
	}
	if out, err := runCLI(t, "notices", "--db", path, "--since", "2026-10-07"); err != nil || out != "No notices since 2026-10-07T00:00:00.\n" {
		t.Errorf("nothing since: %q, %v", out, err)
	}
}

func TestNoticesUsageErrors(t *testing.T) {
	path, _ := noticesDB(t)
	for _, args := range [][]string{
		{"notices", "--db", path, "--rule", "idle"},
		{"notices", "--db", path, "--since", "someday"},
		{"notices", "--db", path, "--since", "2026-10-05", "--until", "2026-10-04"},
	} {
		_, err := runCLI(t, args...)
		var ue usageError
		if !errors.As(err, &ue) {
			t.Errorf("%v: err = %v, want a usage error (exit 2)", args, err)
		}
	}
}

// A user who is not an admin sees only notices about their own jobs,
// whatever the query names: the job source's scoping.
func TestNoticesScopedToUser(t *testing.T) {
	_, db := noticesDB(t)
	uid := 1001
	src := jobsource.ForCaller(db, store.Caller{UID: uid, User: "alice"})
	for _, user := range []string{"", "bob", "alice"} {
		q, err := (&noticesOptions{User: user}).query(time.Now())
		if err != nil {
			t.Fatal(err)
		}
		rows, err := listNotices(context.Background(), src, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			if r.User != "alice" {
				t.Errorf("--user %q: alice sees %s's notice of job %s", user, r.User, r.JobID)
			}
		}
		if user != "bob" && len(rows) != 3 {
			t.Errorf("--user %q: alice sees %d notices, want her 3", user, len(rows))
		}
	}
}
