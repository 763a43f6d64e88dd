package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/cmd/internal/hookbin/hookbintest"
	"github.com/gpuprof/gpuprof/config"
	"github.com/gpuprof/gpuprof/hookproto/fwd"
	"github.com/gpuprof/gpuprof/internal/conffile"
)

// fake is a thin hook whose agent, exec and environment are the test's.
type fake struct {
	t       *testing.T
	env     map[string]string
	sendErr error
	sent    []fwd.Hook
	socket  string
	timeout time.Duration
	execd   []string
	stdout  bytes.Buffer
	stderr  bytes.Buffer
}

var began = time.Date(2026, 12, 7, 21, 0, 0, 123456789, time.UTC)

func (f *fake) thin() thin {
	var environ []string
	for k, v := range f.env {
		environ = append(environ, k+"="+v)
	}
	slices.Sort(environ)
	return thin{
		began:   began,
		getenv:  func(k string) string { return f.env[k] },
		environ: environ,
		stdout:  &f.stdout, stderr: &f.stderr,
		handTo: func() string { return "/opt/bin/gpuprof" },
		exec: func(path string, argv, env []string) error {
			if path != argv[0] {
				f.t.Errorf("exec %s with argv[0] %s", path, argv[0])
			}
			f.execd = argv
			return errors.New("exec faked")
		},
		send: func(socket string, h fwd.Hook, timeout time.Duration) error {
			f.socket, f.timeout = socket, timeout
			f.sent = append(f.sent, h)
			return f.sendErr
		},
	}
}

// TestRunArguments: gpuprof-hook treats every command line of
// hookbintest.ArgumentCases as the other hook binary does: the hook's name
// (or slurmd's SLURM_SCRIPT_CONTEXT without one) and --config, --db,
// --log-level; a bad flag is on stderr and exits 0, as gpuprof's hooks
// do; no hook name is a usage error.
func TestRunArguments(t *testing.T) {
	for _, tt := range hookbintest.ArgumentCases {
		t.Run(tt.Name, func(t *testing.T) {
			f := &fake{t: t, env: map[string]string{"SLURM_SCRIPT_CONTEXT": tt.Context}}
			code := f.thin().run(tt.Args)
			if code != tt.WantCode || !strings.Contains(f.stderr.String(), tt.WantStderr) || !strings.Contains(f.stdout.String(), tt.WantStdout) {
				t.Errorf("run(%q) = %d, stdout %q, stderr %q; want %d, stdout with %q, stderr with %q",
					tt.Args, code, f.stdout.String(), f.stderr.String(), tt.WantCode, tt.WantStdout, tt.WantStderr)
			}
			if len(f.sent) > 0 || f.execd != nil {
				t.Errorf("run(%q) ran a hook: sent %d, exec %q", tt.Args, len(f.sent), f.execd)
			}
		})
	}
}

func TestHookKind(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		context string
		want    string
	}{
		{name: "prolog", args: []string{"prolog"}, want: "prolog"},
		{name: "jobcomp, extra args ignored", args: []string{"jobcomp", "extra"}, want: "jobcomp"},
		{name: "slurmd's epilog, no args", context: "epilog_slurmd", want: "epilog"},
		{name: "slurmd's prolog, no args", context: "prolog_slurmd", want: "prolog"},
		{name: "the name beats the context", args: []string{"epilog"}, context: "prolog_slurmd", want: "epilog"},
		{name: "flags before the name", args: []string{"--config", "/x.toml", "epilog"}, want: "epilog"},
		{name: "nothing"},
		{name: "agent", args: []string{"agent"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _, _ := parse(tt.args, func(string) string { return tt.context })
			if f.kind != tt.want {
				t.Errorf("parse(%q, %q).kind = %q, want %q", tt.args, tt.context, f.kind, tt.want)
			}
		})
	}
}

// TestForwardsToTheAgent: a prolog or epilog goes to the agent whole: the
// configuration file's sum, the environment as the process has it, the
// time the hook began and its log level, on the file's socket within its
// share of hooks.deadline; with the agent's OK it exits 0 and hands
// nothing over.
func TestForwardsToTheAgent(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "gpuprof.toml")
	data := []byte("socket = \"" + dir + "/agent.sock\"\n\n[hooks]\ndeadline = \"4s\"\n")
	if err := os.WriteFile(cfg, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"prolog", "epilog"} {
		f := &fake{t: t, env: map[string]string{"SLURM_JOB_ID": "42", "GPUPROF_CONFIG": cfg}}
		if code := f.thin().run([]string{kind, "--log-level=debug"}); code != 0 {
			t.Fatalf("%s: exit %d", kind, code)
		}
		if f.execd != nil || f.stderr.Len() > 0 {
			t.Fatalf("%s: handed over (%q), stderr %q", kind, f.execd, f.stderr.String())
		}
		want := fwd.Hook{Kind: kind, ConfigSum: conffile.Sum(data), Began: began, LogLevel: "debug",
			Env: []string{"GPUPROF_CONFIG=" + cfg, "SLURM_JOB_ID=42"}}
		if len(f.sent) != 1 || !equalHooks(f.sent[0], want) {
			t.Fatalf("%s: sent %+v, want %+v", kind, f.sent, want)
		}
		share := map[string]float64{"prolog": 0.36, "epilog": 0.45}[kind]
		if f.socket != dir+"/agent.sock" || f.timeout != time.Duration(share*float64(4*time.Second)) {
			t.Errorf("%s: sent to %s within %s", kind, f.socket, f.timeout)
		}
	}
}

func equalHooks(a, b fwd.Hook) bool {
	return a.Kind == b.Kind && a.ConfigSum == b.ConfigSum && a.Began.Equal(b.Began) && a.LogLevel == b.LogLevel && slices.Equal(a.Env, b.Env)
}

// TestHandsOver: what the agent does not take, and what the thin hook
// does not forward, is the whole hook's to run (gpuprof-hook-full, else
// gpuprof: the fake's /opt/bin/gpuprof): exec'd with the hook's name, the
// flags it was given and, for a node hook, the time it began.
func TestHandsOver(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "gpuprof.toml")
	if err := os.WriteFile(cfg, []byte("socket = \"/nowhere.sock\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	beganFlag := "--hook-began=2026-12-07T21:00:00.123456789Z"
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		sendErr error
		want    []string
		sends   int
	}{
		{name: "agent did not take it", args: []string{"prolog", "--config", cfg, "--db", "/d.db"}, sendErr: fwd.ErrNotTaken, sends: 1,
			want: []string{"/opt/bin/gpuprof", "prolog", "--config", cfg, "--db", "/d.db", "--hook-began", beganFlag[len("--hook-began="):]}},
		{name: "no agent, config from the environment", args: []string{"epilog"}, env: map[string]string{"GPUPROF_CONFIG": cfg}, sendErr: errors.New("connect: no such file"), sends: 1,
			want: []string{"/opt/bin/gpuprof", "epilog", "--hook-began", beganFlag[len("--hook-began="):]}},
		{name: "jobcomp", args: []string{"jobcomp", "--log-level", "warn"},
			want: []string{"/opt/bin/gpuprof", "jobcomp", "--log-level", "warn"}},
		{name: "configuration missing", args: []string{"prolog", "--config", filepath.Join(dir, "none.toml")},
			want: []string{"/opt/bin/gpuprof", "prolog", "--config", filepath.Join(dir, "none.toml"), "--hook-began", beganFlag[len("--hook-began="):]}},
		{name: "configuration not a file", args: []string{"prolog", "--config", dir},
			want: []string{"/opt/bin/gpuprof", "prolog", "--config", dir, "--hook-began", beganFlag[len("--hook-began="):]}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fake{t: t, env: tt.env, sendErr: tt.sendErr}
			if code := f.thin().run(tt.args); code != 0 {
				t.Fatalf("exit %d", code)
			}
			if !slices.Equal(f.execd, tt.want) || len(f.sent) != tt.sends {
				t.Errorf("exec %q after %d sends; want %q after %d", f.execd, len(f.sent), tt.want, tt.sends)
			}
			// The faked exec fails: that is said, and the hook exits 0.
			if !strings.Contains(f.stderr.String(), "job not recorded: exec /opt/bin/gpuprof: exec faked") {
				t.Errorf("stderr %q", f.stderr.String())
			}
		})
	}
}

// TestNoGPUProfToHandTo: without gpuprof-hook-full or the gpuprof binary
// a hand-over cannot happen; the hook says so and exits 0.
func TestNoGPUProfToHandTo(t *testing.T) {
	f := &fake{t: t}
	th := f.thin()
	th.handTo = func() string { return "" }
	if code := th.run([]string{"jobcomp"}); code != 0 || !strings.Contains(f.stderr.String(), "neither gpuprof-hook-full nor the gpuprof binary") {
		t.Errorf("exit %d, stderr %q", code, f.stderr.String())
	}
}

// TestSettings: the socket and hooks.deadline as the TOML decoder reads
// them wherever they are written plainly; anything else leaves the
// default, never another key's value.
func TestSettings(t *testing.T) {
	tests := []struct {
		name     string
		file     string
		socket   string
		deadline time.Duration
	}{
		{name: "empty", file: "", socket: defaultSocket, deadline: defaultDeadline},
		{name: "plain", file: "socket = \"/run/x.sock\"\n[hooks]\ndeadline = \"3s\"\n", socket: "/run/x.sock", deadline: 3 * time.Second},
		{name: "literal, comments, spacing", file: "  socket='/run/y.sock'   # the agent\n[ hooks ] # node hooks\n\tdeadline   =  \"1500ms\" # short\n", socket: "/run/y.sock", deadline: 1500 * time.Millisecond},
		{name: "another table's socket", file: "[munge]\nsocket = \"/run/munge.sock\"\n", socket: defaultSocket, deadline: defaultDeadline},
		{name: "another table's deadline", file: "[jobcomp]\ndeadline = \"9s\"\n[notices]\ndeadline = \"8s\"\n", socket: defaultSocket, deadline: defaultDeadline},
		{name: "socket after a table", file: "[hooks]\nsocket = \"/run/z.sock\"\n", socket: defaultSocket, deadline: defaultDeadline},
		{name: "escaped string", file: "socket = \"/run/a\\u0062.sock\"\n", socket: defaultSocket, deadline: defaultDeadline},
		{name: "inside a multi-line string", file: "motd = \"\"\"\nsocket = \"/evil.sock\"\n\"\"\"\n", socket: defaultSocket, deadline: defaultDeadline},
		{name: "deadline out of range", file: "[hooks]\ndeadline = \"2m\"\n", socket: defaultSocket, deadline: defaultDeadline},
		{name: "deadline not a duration", file: "[hooks]\ndeadline = 2\n", socket: defaultSocket, deadline: defaultDeadline},
		{name: "array table", file: "[[hooks]]\ndeadline = \"5s\"\n", socket: defaultSocket, deadline: defaultDeadline},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			socket, deadline := settings([]byte(tt.file))
			if socket != tt.socket || deadline != tt.deadline {
				t.Errorf("settings(%q) = %s, %s; want %s, %s", tt.file, socket, deadline, tt.socket, tt.deadline)
			}
		})
	}
}

// TestSettingsAgreeWithConfig: where settings reads a value from a file
// the TOML decoder takes, it is the decoder's value (the example
// configuration, and the plain cases above).
func TestSettingsAgreeWithConfig(t *testing.T) {
	dir := t.TempDir()
	files := []string{
		"socket = \"/run/x.sock\"\n[hooks]\ndeadline = \"3s\"\n",
		"  socket='/run/y.sock'   # the agent\n[ hooks ] # node hooks\n\tdeadline   =  \"1500ms\" # short\n",
	}
	if b, err := os.ReadFile("../../contrib/slurm/gpuprof.toml.example"); err == nil {
		files = append(files, string(b))
	} else {
		t.Fatal(err)
	}
	for i, file := range files {
		path := filepath.Join(dir, "c.toml")
		if err := os.WriteFile(path, []byte(file), 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := config.Load(path, true)
		if err != nil {
			t.Fatalf("file %d: %v", i, err)
		}
		socket, deadline := settings([]byte(file))
		if socket != c.Socket || deadline != c.Hooks.Deadline.D() {
			t.Errorf("file %d: settings = %s, %s; config.Load = %s, %s", i, socket, deadline, c.Socket, c.Hooks.Deadline.D())
		}
	}
}

// TestDefaultsAreConfigs: the thin hook's copies of config's defaults.
func TestDefaultsAreConfigs(t *testing.T) {
	d := config.Default()
	if defaultConfig != config.DefaultPath || defaultSocket != d.Socket || defaultDeadline != d.Hooks.Deadline.D() {
		t.Errorf("defaults %s, %s, %s; config's %s, %s, %s", defaultConfig, defaultSocket, defaultDeadline,
			config.DefaultPath, d.Socket, d.Hooks.Deadline.D())
	}
	long := config.Default()
	long.Hooks.Deadline = config.Duration(maxDeadline)
	longer := config.Default()
	longer.Hooks.Deadline = config.Duration(maxDeadline + time.Nanosecond)
	if long.Validate() != nil || longer.Validate() == nil {
		t.Errorf("maxDeadline %s is not config's largest valid hooks.deadline", maxDeadline)
	}
}
