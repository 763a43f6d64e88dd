package jobend

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// fakeMailer writes a mailer that records its arguments (one per
// NUL-terminated field) and its stdin in dir.
func fakeMailer(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "mail")
	script := "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\0' \"$a\"; done >" + dir + "/argv\ncat >" + dir + "/body\n"
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// slurmArgs are the arguments slurmctld gives MailProg for a job whose
// name holds a line break and a Bcc: line.
var slurmArgs = []string{"-s", "Slurm Job_id=4242 Name=train\nBcc: victim@example.org Ended, Run time 00:10:00, COMPLETED, ExitCode 0", "alice"}

type execCall struct {
	path string
	argv []string
}

func testMailProg(t *testing.T, kind string, summary func(context.Context, string) (string, error)) (MailProg, *[]execCall, string) {
	dir := t.TempDir()
	var calls []execCall
	env := map[string]string{"SLURM_JOB_ID": "4242", "SLURM_JOB_MAIL_TYPE": kind}
	return MailProg{
		Mailer:   fakeMailer(t, dir),
		Deadline: 300 * time.Millisecond,
		Summary:  summary,
		Log:      slog.New(slog.DiscardHandler),
		Exec: func(path string, argv []string, _ []string) error {
			calls = append(calls, execCall{path, argv})
			return errors.New("exec recorded")
		},
		Stdin:  strings.NewReader(""),
		Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{},
		Getenv: func(k string) string { return env[k] },
	}, &calls, dir
}

func TestMailProgAppendsTheSummary(t *testing.T) {
	m, calls, dir := testMailProg(t, "Ended", func(context.Context, string) (string, error) {
		return "-- \nGPU summary by gpuprof for job 4242\n", nil
	})
	m.Stdin = strings.NewReader("Slurm's body, if any\n")
	code, err := m.Run(context.Background(), slurmArgs)
	if code != 0 || err != nil || len(*calls) != 0 {
		t.Fatalf("Run: %d, %v, exec calls %v", code, err, *calls)
	}
	argv, _ := os.ReadFile(filepath.Join(dir, "argv"))
	if got := strings.Split(strings.TrimSuffix(string(argv), "\x00"), "\x00"); !reflect.DeepEqual(got, slurmArgs) {
		t.Errorf("mailer's arguments %q, want Slurm's %q", got, slurmArgs)
	}
	body, _ := os.ReadFile(filepath.Join(dir, "body"))
	if want := "Slurm's body, if any\n\n-- \nGPU summary by gpuprof for job 4242\n"; string(body) != want {
		t.Errorf("body %q, want %q", body, want)
	}
}

func TestMailProgUnchanged(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	for _, tc := range []struct {
		name, kind string
		summary    func(context.Context, string) (string, error)
		asked      bool
	}{
		{"a begin mail", "Began", nil, false},
		{"a mail type Slurm may add", "Staged", nil, false},
		{"no job found", "Ended", func(context.Context, string) (string, error) { return "", errors.New("job 4242: not found") }, true},
		{"no answer in time", "Failed", func(context.Context, string) (string, error) { <-block; return "late", nil }, true},
		{"a panic", "Reached time limit", func(context.Context, string) (string, error) { panic("bug") }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			asked := false
			summary := tc.summary
			if summary == nil {
				summary = func(context.Context, string) (string, error) { return "", nil }
			}
			m, calls, dir := testMailProg(t, tc.kind, func(ctx context.Context, id string) (string, error) {
				asked = true
				return summary(ctx, id)
			})
			began := time.Now()
			_, err := m.Run(context.Background(), slurmArgs)
			if took := time.Since(began); took > m.Deadline+time.Second {
				t.Errorf("took %s, past the deadline %s", took, m.Deadline)
			}
			if asked != tc.asked {
				t.Errorf("summary asked: %v, want %v", asked, tc.asked)
			}
			want := []execCall{{m.Mailer, append([]string{m.Mailer}, slurmArgs...)}}
			if !reflect.DeepEqual(*calls, want) {
				t.Errorf("exec calls %q, want the mailer with Slurm's arguments %q", *calls, want)
			}
			if !errors.Is(err, ErrNoMailer) {
				t.Errorf("a failed exec: %v, want ErrNoMailer", err)
			}
			if _, err := os.Stat(filepath.Join(dir, "body")); err == nil {
				t.Errorf("the mailer ran as a child: the mail went out twice")
			}
		})
	}
}

// TestMailProgLoop: a mailer that runs gpuprof mailprog again (the
// wrapper named as mail_prog.mailer) gets the mail through DefaultMailer
// unchanged, instead of a loop; the mailer's environment says so.
func TestMailProgLoop(t *testing.T) {
	m, calls, _ := testMailProg(t, "Ended", func(context.Context, string) (string, error) { return "summary", nil })
	var envs [][]string
	m.Exec = func(path string, argv []string, env []string) error {
		*calls = append(*calls, execCall{path, argv})
		envs = append(envs, env)
		return errors.New("exec recorded")
	}
	m.Getenv = func(k string) string {
		return map[string]string{"SLURM_JOB_ID": "1", "SLURM_JOB_MAIL_TYPE": "Ended", "GPUPROF_MAILPROG": "1"}[k]
	}
	_, _ = m.Run(context.Background(), slurmArgs)
	if len(*calls) != 1 || (*calls)[0].path != DefaultMailer || !reflect.DeepEqual((*calls)[0].argv[1:], slurmArgs) {
		t.Errorf("exec calls %q, want %s with Slurm's arguments", *calls, DefaultMailer)
	}
	// A first run marks the mailer's environment.
	m, calls, _ = testMailProg(t, "Began", nil)
	m.Env = []string{"PATH=/usr/bin"}
	m.Exec = func(path string, argv []string, env []string) error {
		envs = append(envs[:0], env)
		return errors.New("exec recorded")
	}
	_, _ = m.Run(context.Background(), slurmArgs)
	if len(envs) != 1 || !reflect.DeepEqual(envs[0], []string{"PATH=/usr/bin", "GPUPROF_MAILPROG=1"}) {
		t.Errorf("the mailer's environment %q, want the marker added", envs)
	}
	_ = calls
}
