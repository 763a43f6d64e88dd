package notice

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/config"
	"github.com/gpuprof/gpuprof/profile"
)

// TestSummariseDay: per user, the GPU-hours held and idle by the
// report's rule (idle fraction × hours, a never-touched GPU fully) and
// the notices; a user with notices and no GPU-hours is listed, one with
// neither idle hours nor notices is not; most idle first, then by name;
// the clusters of the jobs and of the notices, sorted.
func TestSummariseDay(t *testing.T) {
	day := analysis.Window{From: time.Date(2026, 10, 5, 0, 0, 0, 0, time.UTC), To: time.Date(2026, 10, 6, 0, 0, 0, 0, time.UTC)}
	gpu := func(idle float64) analysis.GPU {
		return analysis.GPU{Node: "gpu01", Model: "NVIDIA H100 80GB HBM3", UtilMean: 100 * (1 - idle), UtilMeanValid: true,
			IdleFraction: idle, IdleValid: true, IdleAllocation: idle == 1}
	}
	ran := func(id, user string, hours int, gpus ...analysis.GPU) analysis.Job {
		start := day.From.Add(8 * time.Hour)
		return analysis.Job{Cluster: "lab", ID: id, User: user, Partition: "gpu", State: "COMPLETED",
			Submit: start, Start: start, End: start.Add(time.Duration(hours) * time.Hour),
			ReqGPUs: len(gpus), HasGPUData: true, GPUs: gpus}
	}
	in := analysis.Input{Window: day, Jobs: []analysis.Job{
		ran("101", "alice", 1, gpu(1), gpu(0)),    // 2 held, 1 idle
		ran("102", "bob", 2, gpu(0.25)),           // 2 held, 0.5 idle
		ran("103", "carol", 3, gpu(0)),            // busy, no notice: not listed
		ran("104", "dave", 1, gpu(0.5), gpu(0.5)), // 2 held, 1 idle: ties alice, after her
	}}
	notices := []Row{{Cluster: "lab", User: "alice"}, {Cluster: "lab", User: "alice"}, {Cluster: "other", User: "erin"}, {Cluster: "lab", User: "bob"}}
	d := SummariseDay(in, day, day.To, notices, analysis.DefaultConfig())
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	if d.Jobs != 4 || !near(d.HeldHours, 9) || !near(d.IdleHours, 2.5) || !near(d.Measured, 9) {
		t.Errorf("day: %d jobs, %.2f held, %.2f idle, %.2f measured; want 4, 9, 2.5, 9", d.Jobs, d.HeldHours, d.IdleHours, d.Measured)
	}
	want := []DigestUser{
		{Name: "alice", IdleHours: 1, HeldHours: 2, Jobs: 1, Notices: 2},
		{Name: "dave", IdleHours: 1, HeldHours: 2, Jobs: 1},
		{Name: "bob", IdleHours: 0.5, HeldHours: 2, Jobs: 1, Notices: 1},
		{Name: "erin", Notices: 1},
	}
	if len(d.Users) != len(want) {
		t.Fatalf("users = %+v, want %+v", d.Users, want)
	}
	for i, u := range d.Users {
		w := want[i]
		if u.Name != w.Name || !near(u.IdleHours, w.IdleHours) || !near(u.HeldHours, w.HeldHours) || u.Jobs != w.Jobs || u.Notices != w.Notices {
			t.Errorf("user %d = %+v, want %+v", i, u, w)
		}
	}
	if !slices.Equal(d.Clusters, []string{"lab", "other"}) {
		t.Errorf("clusters = %v, want lab, other", d.Clusters)
	}
	if !d.Window.From.Equal(day.From) || !d.Now.Equal(day.To) {
		t.Errorf("window %v, now %v", d.Window, d.Now)
	}
}

// TestSendDigest: the digest goes to its one recipient as every notice
// does, From notices.from, with a Message-ID of its day; a refusal names
// the address.
func TestSendDigest(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("NOTICE_CAPTURE", dir)
	c := config.NoticesConfig{From: "gpuprof <gpuprof@lab.example>", Sendmail: testdata(t, "sendmail.sh"), SendTimeout: config.Duration(5 * time.Second)}
	now := time.Date(2026, 10, 6, 7, 0, 0, 0, time.UTC)
	if err := SendDigest(context.Background(), c, "admins@lab.example", "gpuprof: idle GPUs on lab, 2026-10-05", "4.0 GPU-hours were held", now); err != nil {
		t.Fatal(err)
	}
	argv, _ := os.ReadFile(filepath.Join(dir, "1.argv"))
	if got := strings.Fields(string(argv)); !slices.Equal(got, []string{"-i", "--", "admins@lab.example"}) {
		t.Errorf("sendmail argv = %q", got)
	}
	msg, _ := os.ReadFile(filepath.Join(dir, "1.msg"))
	for _, h := range []string{"From: \"gpuprof\" <gpuprof@lab.example>\r\n", "To: admins@lab.example\r\n", "Subject: gpuprof: idle GPUs on lab, 2026-10-05\r\n", "digest.20261006"} {
		if !strings.Contains(string(msg), h) {
			t.Errorf("message lacks %q:\n%s", h, msg)
		}
	}
	t.Setenv("NOTICE_EXIT", "75")
	if err := SendDigest(context.Background(), c, "admins@lab.example", "s", "b", now); err == nil || !strings.HasPrefix(err.Error(), "notices digest: mail to admins@lab.example: ") {
		t.Errorf("refused: %v", err)
	}
}

func TestDayWindow(t *testing.T) {
	now := time.Date(2026, 10, 6, 7, 0, 0, 0, time.UTC)
	for spec, from := range map[string]time.Time{
		"2026-10-05": time.Date(2026, 10, 5, 0, 0, 0, 0, time.UTC),
		"yesterday":  time.Date(2026, 10, 5, 0, 0, 0, 0, time.UTC),
		"today":      time.Date(2026, 10, 6, 0, 0, 0, 0, time.UTC),
	} {
		w, err := DayWindow(spec, now)
		if err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		if !w.From.Equal(from) || !w.To.Equal(from.AddDate(0, 0, 1)) {
			t.Errorf("%s: day window = %v, want from %v for a day", spec, w, from)
		}
	}
	if _, err := DayWindow("someday", now); err == nil {
		t.Error("someday: no error")
	}
}

// TestSummariseDayBody: the day's notices are listed in the order given
// (oldest first: monthly.Digest reverses the read), counted per user and
// by status, and named in the body; the subject names the clusters of
// the jobs and the notices.
func TestSummariseDayBody(t *testing.T) {
	day := analysis.Window{From: time.Date(2026, 10, 5, 0, 0, 0, 0, time.UTC), To: time.Date(2026, 10, 6, 0, 0, 0, 0, time.UTC)}
	start := day.From.Add(8 * time.Hour)
	in := analysis.Input{Window: day, Jobs: []analysis.Job{{Cluster: "lab", ID: "101", User: "alice", Partition: "gpu", State: "COMPLETED",
		Submit: start, Start: start, End: start.Add(time.Hour), ReqGPUs: 1, HasGPUData: true,
		GPUs: []analysis.GPU{{Node: "gpu01", IdleFraction: 1, IdleValid: true, IdleAllocation: true}}}}}
	n := func(id, rule, status string, at time.Duration) Row {
		return Row{Cluster: "lab", SlurmID: id, User: "alice", Notice: profile.Notice{Rule: rule, Status: status, Time: start.Add(at), Evidence: "seen " + id}}
	}
	d := SummariseDay(in, day, day.To, []Row{
		n("101", profile.RuleIdleGPU, profile.NoticeSent, 10*time.Minute),
		n("101", profile.RuleIdleJob, profile.NoticeSent, 30*time.Minute),
	}, analysis.DefaultConfig())
	if len(d.Notices) != 2 || d.Notices[0].Rule != profile.RuleIdleGPU {
		t.Errorf("notices = %+v, want the idle_gpu one first", d.Notices)
	}
	if len(d.Users) != 1 || d.Users[0].Notices != 2 {
		t.Errorf("users = %+v, want alice with 2 notices", d.Users)
	}
	if got, want := d.Subject(), "gpuprof: idle GPUs on lab, 2026-10-05"; got != want {
		t.Errorf("subject %q, want %q", got, want)
	}
	var body strings.Builder
	d.WriteBody(&body)
	for _, s := range []string{
		"Idle GPUs on 2026-10-05 (local time), from gpuprof's readings.\n\n",
		"Notices that day (2 notices: 2 sent):\n\n08:10:00  job 101  user alice  idle GPU  sent\n    seen 101\n",
		"gpuprof notices --since 2026-10-05 --until 2026-10-06 lists them with their fixes.\n",
	} {
		if !strings.Contains(body.String(), s) {
			t.Errorf("body lacks\n%s\ngot\n%s", s, body.String())
		}
	}
	var empty strings.Builder
	Digest{Window: day, Now: day.From.Add(90 * time.Minute)}.WriteBody(&empty)
	if got, want := empty.String(), "Idle GPUs on 2026-10-05 up to 01:30 (local time), from gpuprof's readings.\n\nNo GPU was held that day.\n"; got != want {
		t.Errorf("empty day:\n%q\nwant\n%q", got, want)
	}
}

func TestCounting(t *testing.T) {
	if got, want := Counting([]string{profile.NoticeSent, "daily_cap", profile.NoticeSent}), "3 notices: 2 sent, 1 "+analysis.NoticeStatusWords("daily_cap"); got != want {
		t.Errorf("Counting = %q, want %q", got, want)
	}
	if got, want := Counting([]string{profile.NoticeSent}), "1 notice: 1 sent"; got != want {
		t.Errorf("Counting = %q, want %q", got, want)
	}
}
