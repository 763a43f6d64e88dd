package hooks

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/config"
	"github.com/gpuprof/gpuprof/hookproto"
	"github.com/gpuprof/gpuprof/hookproto/fwd"
)

// hookEnv is a prolog's or epilog's environment as slurmd gives it.
func hookEnv(ctx, job string, extra ...string) []string {
	return append([]string{
		"SLURM_SCRIPT_CONTEXT=" + ctx, "SLURM_JOB_ID=" + job, "SLURM_JOB_USER=alice", "SLURM_JOB_UID=1001",
		"SLURM_JOB_GID=1001", "SLURM_JOB_ACCOUNT=vision", "SLURM_JOB_PARTITION=gpu", "SLURMD_NODENAME=n1",
		"SLURM_JOB_GPUS=1,3", "SLURM_JOB_EXIT_CODE2=3:0", "SLURM_JOB_START_TIME=1800000000",
	}, extra...)
}

// TestForwardedHookSendsWhatTheHookWould: for a prolog and an epilog, the
// request the agent builds from a forwarded environment is the one the
// full hook sends the agent from the same environment and configuration.
func TestForwardedHookSendsWhatTheHookWould(t *testing.T) {
	for _, kind := range []Kind{KindProlog, KindEpilog} {
		t.Run(string(kind), func(t *testing.T) {
			d := deps(t, "77")
			d.Config.Cluster = ""
			d.Config.LogFile = filepath.Join(t.TempDir(), "hooks.log")
			env := hookEnv(string(kind)+"_slurmd", "77", "SLURM_CLUSTER_NAME=Forward")
			h := fwd.Hook{Kind: string(kind), ConfigSum: "sum", Began: t0, Env: env}
			f := Forwarder{Config: d.Config, Sum: "sum", Now: d.Now}
			req, finish, err := f.Request(h)
			if err != nil {
				t.Fatal(err)
			}
			finish(errors.New("not taken")) // nothing logged, nothing opened

			// The full hook, run on the same environment against a
			// stand-in agent.
			got := standInAgent(t, d, hookproto.Response{OK: true})
			rt := Runtime{
				Load:    func() (config.Config, error) { return d.Config, nil },
				Process: Process{Getenv: h.Getenv, Exit: func(c int) { t.Errorf("exit %d", c) }},
			}
			Run(context.Background(), kind, rt)
			sent := <-got
			// The two clocks: the forwarder's is d.Now, the full hook's
			// the real one.
			if kind == KindEpilog {
				sent.End.End = req.End.End
			}
			if !reflect.DeepEqual(req, sent) {
				t.Errorf("forwarded %+v\nfull hook sent %+v", req, sent)
			}
			js := req.Start
			if kind == KindEpilog {
				js = &req.End.JobStart
			}
			if js.Cluster != "forward" || js.JobID != "77" || len(js.GPUs) != 2 {
				t.Errorf("start %+v, want SLURM_CLUSTER_NAME's cluster, job 77 and two GPUs", js)
			}
		})
	}
}

// TestForwardedHookRefused: another configuration, no configuration, a
// jobcomp or an environment that does not parse is refused, with nothing
// logged: the full hook will run it.
func TestForwardedHookRefused(t *testing.T) {
	d := deps(t, "78")
	logFile := filepath.Join(t.TempDir(), "hooks.log")
	d.Config.LogFile = logFile
	tests := []struct {
		name string
		f    Forwarder
		h    fwd.Hook
		want string
	}{
		{name: "another configuration", f: Forwarder{Config: d.Config, Sum: "a"}, h: fwd.Hook{Kind: "prolog", ConfigSum: "b", Env: hookEnv("prolog_slurmd", "78")}, want: "another configuration than the agent"},
		{name: "agent read no file", f: Forwarder{Config: d.Config}, h: fwd.Hook{Kind: "prolog", Env: hookEnv("prolog_slurmd", "78")}, want: "no configuration file"},
		{name: "jobcomp", f: Forwarder{Config: d.Config, Sum: "a"}, h: fwd.Hook{Kind: "jobcomp", ConfigSum: "a", Env: []string{"JOBID=78"}}, want: "neither a prolog nor an epilog"},
		{name: "bad environment", f: Forwarder{Config: d.Config, Sum: "a"}, h: fwd.Hook{Kind: "epilog", ConfigSum: "a", Env: []string{"SLURM_JOB_ID=7;rm"}}, want: "bad environment"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, finish, err := tt.f.Request(tt.h)
			if err == nil || !strings.Contains(err.Error(), tt.want) || finish != nil {
				t.Errorf("err %v, want %q", err, tt.want)
			}
		})
	}
	if _, err := os.Stat(logFile); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused hook wrote its log: %v", err)
	}
}

// TestForwardedHookLogsAsTheHook: once the agent took the hook, its lines
// are where the hook's go (log_file), as the hook writes them: its
// environment's problems, then done with via=agent and the time since the
// hook began; at the hook's own level.
func TestForwardedHookLogsAsTheHook(t *testing.T) {
	d := deps(t, "79")
	d.Config.LogFile = filepath.Join(t.TempDir(), "hooks.log")
	now := t0.Add(3 * time.Millisecond)
	f := Forwarder{Config: d.Config, Sum: "s", Now: func() time.Time { return now }}
	// A count that is not one: an environment problem, logged as a
	// warning.
	env := hookEnv("epilog_slurmd", "79", "SLURM_JOB_NUM_NODES=many")
	for _, level := range []string{"", "error"} {
		_, finish, err := f.Request(fwd.Hook{Kind: "epilog", ConfigSum: "s", Began: t0, LogLevel: level, Env: env})
		if err != nil {
			t.Fatal(err)
		}
		finish(nil)
	}
	b, err := os.ReadFile(d.Config.LogFile)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 2 {
		t.Fatalf("log:\n%s\nwant a problem and a done line (the second hook logs at error: none)", b)
	}
	if !strings.Contains(lines[0], "level=WARN msg=\"environment problem\" hook=epilog job=79 problem=") {
		t.Errorf("first line %q", lines[0])
	}
	if !strings.Contains(lines[1], "level=INFO msg=done hook=epilog job=79 via=agent err=<nil> took=3ms") {
		t.Errorf("done line %q", lines[1])
	}
}

// TestHandedOverHookCountsFromItsStart: a hook gpuprof-hook hands over
// (Runtime.Began) counts its took from when gpuprof-hook began, unless
// that time is in the future or older than the deadline.
func TestHandedOverHookCountsFromItsStart(t *testing.T) {
	tests := []struct {
		name     string
		ago      time.Duration
		min, max time.Duration
	}{
		{name: "half a second ago", ago: 500 * time.Millisecond, min: 500 * time.Millisecond, max: 1500 * time.Millisecond},
		{name: "in the future", ago: -time.Hour, min: 0, max: 500 * time.Millisecond},
		{name: "before the deadline", ago: time.Hour, min: 0, max: 500 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := deps(t, "80")
			d.Config.LogFile = filepath.Join(t.TempDir(), "hooks.log")
			standInAgent(t, d, hookproto.Response{OK: true})
			h := fwd.Hook{Env: hookEnv("prolog_slurmd", "80")}
			Run(context.Background(), KindProlog, Runtime{
				Load:    func() (config.Config, error) { return d.Config, nil },
				Process: Process{Getenv: h.Getenv, Exit: func(c int) { t.Errorf("exit %d", c) }},
				Began:   time.Now().Add(-tt.ago),
			})
			b, err := os.ReadFile(d.Config.LogFile)
			if err != nil {
				t.Fatal(err)
			}
			_, took, ok := strings.Cut(strings.TrimSpace(string(b)), " took=")
			d2, err := time.ParseDuration(took)
			if !ok || err != nil || d2 < tt.min || d2 > tt.max {
				t.Errorf("log %s: took %q, want %s to %s", b, took, tt.min, tt.max)
			}
		})
	}
}

// TestForwardedHookWithoutItsStart: a forwarded hook that does not say
// when it began counts its took from when the agent got it.
func TestForwardedHookWithoutItsStart(t *testing.T) {
	d := deps(t, "81")
	d.Config.LogFile = filepath.Join(t.TempDir(), "hooks.log")
	now := t0
	f := Forwarder{Config: d.Config, Sum: "s", Now: func() time.Time { return now }}
	_, finish, err := f.Request(fwd.Hook{Kind: "prolog", ConfigSum: "s", Env: hookEnv("prolog_slurmd", "81")})
	if err != nil {
		t.Fatal(err)
	}
	now = now.Add(2 * time.Millisecond)
	finish(nil)
	if b, err := os.ReadFile(d.Config.LogFile); err != nil || !strings.Contains(string(b), "via=agent err=<nil> took=2ms") {
		t.Errorf("log %q (%v), want took=2ms", b, err)
	}
}
