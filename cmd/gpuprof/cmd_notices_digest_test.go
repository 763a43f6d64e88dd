package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/jobsource"
	"github.com/gpuprof/gpuprof/monthly"
	"github.com/gpuprof/gpuprof/notice"
	"github.com/gpuprof/gpuprof/store"
)

func TestNoticesDigest(t *testing.T) {
	path, db := noticesDB(t)
	now := time.Date(2026, 10, 6, 7, 0, 0, 0, time.UTC)
	w := analysis.Window{From: time.Date(2026, 10, 5, 0, 0, 0, 0, time.UTC), To: time.Date(2026, 10, 6, 0, 0, 0, 0, time.UTC)}
	src := jobsource.ForCaller(db, store.Caller{Admin: true})
	d, err := monthly.Digest(context.Background(), src.Scope(), w, now, analysis.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	// The day holds jobs 101 (2 GPUs, one idle), 102 (1 idle GPU) and 103
	// (busy), an hour each: 4 GPU-hours held, 2 idle; job 104 ran the
	// day before.
	if d.Jobs != 3 || !near(d.HeldHours, 4) || !near(d.IdleHours, 2) {
		t.Errorf("digest: %d jobs, %.2f held, %.2f idle; want 3, 4, 2", d.Jobs, d.HeldHours, d.IdleHours)
	}
	want := []notice.DigestUser{{Name: "alice", IdleHours: 1, HeldHours: 2, Jobs: 1, Notices: 2}, {Name: "bob", IdleHours: 1, HeldHours: 2, Jobs: 2, Notices: 2}}
	if len(d.Users) != len(want) {
		t.Fatalf("users = %+v, want %+v", d.Users, want)
	}
	for i, u := range d.Users {
		if u.Name != want[i].Name || !near(u.IdleHours, want[i].IdleHours) || !near(u.HeldHours, want[i].HeldHours) ||
			u.Jobs != want[i].Jobs || u.Notices != want[i].Notices {
			t.Errorf("user %d = %+v, want %+v", i, u, want[i])
		}
	}
	var keys []string
	for _, n := range d.Notices {
		keys = append(keys, n.SlurmID+"/"+n.Rule)
	}
	if got := keys; !slices.Equal(got, []string{"101/idle_gpu", "101/oversized", "102/idle_job", "90_3/cancel"}) {
		t.Errorf("the day's notices, oldest first = %v", got)
	}

	// The command prints it with --dry-run.
	noticesUTC(t)
	g := &globalOptions{DB: path, ConfigPath: emptyConfig(t)}
	var out strings.Builder
	if err := runDigest(context.Background(), g, &digestOptions{Day: "2026-10-05", DryRun: true, To: "admins@example.org"}, now, &out); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		"To: admins@example.org\nSubject: gpuprof: idle GPUs on lab, 2026-10-05\n\n",
		"4.0 GPU-hours were held by 3 jobs; 2.0 GPU-hours of them were idle (50.0 % of the 4.0 GPU-hours with readings).",
		"USER  IDLE GPU-HOURS HELD GPU-HOURS JOBS NOTICES\nalice            1.0            2.0    1       2\nbob              1.0            2.0    2       2\n",
		"Notices that day (4 notices: 2 sent, 1 job cancelled, 1 not sent: daily cap):",
		"08:30:00  job 101  user alice  idle GPU  sent\n    GPU 1 idle for 30 min",
	} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("digest lacks\n%s\ngot\n%s", s, out.String())
		}
	}
}

func near(a, b float64) bool { return a-b < 1e-6 && b-a < 1e-6 }

func emptyConfig(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "gpuprof.toml")
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestNoticesDigestUsage(t *testing.T) {
	path, _ := noticesDB(t)
	for _, args := range [][]string{
		{"notices", "digest", "--db", path},
		{"notices", "digest", "--db", path, "--dry-run", "--day", "someday"},
		{"notices", "digest", "--db", path, "--to", "admins@example.org, eve@example.org"},
		{"notices", "digest", "--db", path, "--to", "-oQ/tmp x@example.org"},
	} {
		_, err := runCLI(t, args...)
		var ue usageError
		if !errors.As(err, &ue) {
			t.Errorf("%v: err = %v, want a usage error (exit 2)", args, err)
		}
	}
}

// The digest goes through the [notices] mail program as one well-formed
// message to the one address --to names.
func TestNoticesDigestMailed(t *testing.T) {
	path, _ := noticesDB(t)
	dir := t.TempDir()
	sendmail := filepath.Join(dir, "sendmail")
	script := "#!/bin/sh\nprintf '%s\\n' \"$@\" > " + filepath.Join(dir, "args") + "\ncat > " + filepath.Join(dir, "msg") + "\n"
	if err := os.WriteFile(sendmail, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "gpuprof.toml")
	if err := os.WriteFile(cfg, []byte("[notices]\nfrom = \"gpuprof <gpuprof@lab.example>\"\nsendmail = \""+sendmail+"\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	g := &globalOptions{DB: path, ConfigPath: cfg}
	now := time.Date(2026, 10, 6, 7, 0, 0, 0, time.UTC)
	var out strings.Builder
	if err := runDigest(context.Background(), g, &digestOptions{Day: "2026-10-05", To: "admins@lab.example"}, now, &out); err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), "digest of 2026-10-05 mailed to admins@lab.example\n"; got != want {
		t.Errorf("output %q, want %q", got, want)
	}
	args, _ := os.ReadFile(filepath.Join(dir, "args"))
	if got := strings.Fields(string(args)); !slices.Equal(got, []string{"-i", "--", "admins@lab.example"}) {
		t.Errorf("sendmail arguments %q, want -i -- admins@lab.example", got)
	}
	msg, err := os.ReadFile(filepath.Join(dir, "msg"))
	if err != nil {
		t.Fatal(err)
	}
	head, body, ok := strings.Cut(string(msg), "\r\n\r\n")
	if !ok {
		t.Fatalf("no blank line between headers and body:\n%s", msg)
	}
	for _, h := range []string{"From: \"gpuprof\" <gpuprof@lab.example>", "To: admins@lab.example",
		"Subject: gpuprof: idle GPUs on lab, 2026-10-05"} {
		if !slices.Contains(strings.Split(head, "\r\n"), h) {
			t.Errorf("headers lack %q:\n%s", h, head)
		}
	}
	if n := strings.Count(head, "\nTo:") + strings.Count(head, "\nCc:") + strings.Count(head, "\nBcc:"); n != 1 {
		t.Errorf("%d recipient headers, want 1:\n%s", n, head)
	}
	if !strings.Contains(body, "alice") || !strings.Contains(body, "GPU-hours") {
		t.Errorf("body lacks the users' idle GPU-hours:\n%s", body)
	}
}
