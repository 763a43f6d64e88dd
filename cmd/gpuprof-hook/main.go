// Command gpuprof-hook is the binary slurmd runs for every job's prolog
// and epilog (through contrib/slurm/hook.sh when it is installed beside
// gpuprof): `gpuprof-hook prolog|epilog|jobcomp [--config F] [--db D]
// [--log-level L]` records what `gpuprof prolog|epilog|jobcomp` records,
// with the same log lines, and starts as fast as a small program (issue
// #41: prolog and epilog p99 ≤ 3× /bin/true).
//
// It is thin. It reads the configuration file's bytes, not their meaning,
// and forwards the hook's environment to the agent with the file's sum
// (fwd.Hook). The agent, which loaded the same file, builds the job's
// record and writes the hook's log lines (hooks.Forwarder). Everything
// else — jobcomp, no agent, an agent on another configuration or one that
// did not take the hook, a file it cannot read — it hands over: it execs
// gpuprof-hook-full beside it, else the gpuprof that goes with it
// (hookbin.HandOverTo), as `gpuprof-hook-full prolog|epilog|jobcomp` with
// the same flags, which runs the hook whole (hooks.Run: spool, autostart,
// the defaults on a broken file) within what is left of hooks.deadline.
//
// It links no TOML decoder, no reflection-driven JSON, no net package and
// no hook runtime (internal/archtest's TestThinHookIsSmall): a Go
// program's start is paid in page faults, and every package initialiser,
// fresh span and grown stack costs some (docs/benchmarks.md). Like
// gpuprof's hooks it exits 0 whatever happens, a bad flag included; only
// a missing or unknown hook name is a usage error (exit 2).
package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/gpuprof/gpuprof/cmd/internal/hookbin"
	"github.com/gpuprof/gpuprof/hookproto/fwd"
	"github.com/gpuprof/gpuprof/internal/conffile"
)

func main() {
	began := time.Now()
	self, _ := os.Executable()
	h := thin{began: began, getenv: os.Getenv, environ: os.Environ(), stdout: os.Stdout, stderr: os.Stderr,
		handTo: func() string { return hookbin.HandOverTo(self) }, exec: syscall.Exec, send: fwd.Send}
	os.Exit(h.run(os.Args[1:]))
}

// The configuration's defaults the thin hook needs, copies of config's
// (TestDefaultsAreConfigs holds them to it): the file read without
// --config or $GPUPROF_CONFIG, the agent's socket, hooks.deadline and its
// largest valid value.
const (
	defaultConfig   = "/etc/gpuprof/gpuprof.toml"
	defaultSocket   = "/run/gpuprof/agent.sock"
	defaultDeadline = 2 * time.Second
	maxDeadline     = time.Minute
)

// The share of hooks.deadline the agent's answer may take, as the full
// hooks give it (hooks.Prolog, hooks.Epilog: 0.4 and 0.5 of the nine
// tenths Guard leaves them); the full hook a hand-over starts has the rest.
const (
	prologShare = 0.36
	epilogShare = 0.45
)

const usage = `Usage: gpuprof-hook prolog|epilog|jobcomp [--config FILE] [--db PATH] [--log-level LEVEL]

Runs gpuprof's slurmd prolog or epilog or slurmctld's jobcomp hook, as
"gpuprof prolog|epilog|jobcomp" does (see their help); always exits 0.
The agent records a prolog or epilog it forwards; anything else is handed
to the gpuprof binary that goes with this one.

Flags:
      --config string      configuration file (default $GPUPROF_CONFIG, else /etc/gpuprof/gpuprof.toml)
      --db string          database path (overrides the configuration)
      --log-level string   log level: debug, info, warn, error (default "info")
`

// thin is one run of the hook and what it takes from its process.
type thin struct {
	began   time.Time
	getenv  func(string) string
	environ []string
	stdout  io.Writer
	stderr  io.Writer
	// handTo is the binary a hand-over execs ("" when none is found).
	handTo func() string
	exec   func(path string, argv, env []string) error
	send   func(socket string, h fwd.Hook, timeout time.Duration) error
}

// flags are the hook's arguments.
type flags struct {
	kind                     string
	config, db, level        string
	configSet, dbSet, lvlSet bool
}

// run runs the hook args name and returns the exit code; it returns only
// when it does not hand over (exec replaces the process).
func (t thin) run(args []string) (code int) {
	f, help, err := parse(args, t.getenv)
	switch {
	case help:
		_, _ = io.WriteString(t.stdout, usage)
		return 0
	case f.kind == "":
		_, _ = fmt.Fprintf(t.stderr, "Error: no hook named (prolog, epilog or jobcomp)\n%s", usage)
		return 2
	case err != nil:
		// As gpuprof's hooks: the error on stderr (the contrib wrapper
		// appends it to hooks.log), no hook run, exit 0 (a failed prolog
		// drains the node).
		_, _ = fmt.Fprintf(t.stderr, "Error: %v\n", err)
		return 0
	}
	defer func() {
		// A bug here must not cost the job its record: the full hook runs.
		if p := recover(); p != nil {
			code = t.handOver(f, fmt.Sprintf("gpuprof-hook panicked: %v", p))
		}
	}()
	if f.kind == "jobcomp" {
		return t.handOver(f, "")
	}
	path, _ := hookbin.ConfigFile(f.config, t.getenv, defaultConfig)
	data, err := conffile.Read(path, conffile.MaxSize)
	if err != nil {
		// Missing (the defaults), unreadable or not a file: the full hook
		// decides, and logs why.
		return t.handOver(f, "")
	}
	socket, deadline := settings(data)
	share := prologShare
	if f.kind == "epilog" {
		share = epilogShare
	}
	h := fwd.Hook{Kind: f.kind, ConfigSum: conffile.Sum(data), Began: t.began, LogLevel: f.level, Env: t.environ}
	if err := t.send(socket, h, time.Duration(float64(deadline)*share)); err != nil {
		return t.handOver(f, "")
	}
	return 0
}

// handOver execs `gpuprof-hook-full KIND` (else `gpuprof KIND`) with the
// hook's flags and the time it began; why, when not empty, goes to stderr
// first. It returns 0 when the exec fails (said on stderr: the record is
// lost, the node is not).
func (t thin) handOver(f flags, why string) int {
	if why != "" {
		_, _ = fmt.Fprintf(t.stderr, "Error: %s; handing the hook over\n", why)
	}
	bin := t.handTo()
	if bin == "" {
		_, _ = fmt.Fprintf(t.stderr, "Error: job not recorded: neither gpuprof-hook-full nor the gpuprof binary that goes with gpuprof-hook is found\n")
		return 0
	}
	argv := []string{bin, f.kind}
	if f.configSet {
		argv = append(argv, "--config", f.config)
	}
	if f.dbSet {
		argv = append(argv, "--db", f.db)
	}
	if f.lvlSet {
		argv = append(argv, "--log-level", f.level)
	}
	if f.kind != "jobcomp" {
		argv = append(argv, "--"+hookbin.BeganFlag, t.began.Format(time.RFC3339Nano))
	}
	err := t.exec(bin, argv, t.environ)
	_, _ = fmt.Fprintf(t.stderr, "Error: job not recorded: exec %s: %v\n", bin, err)
	return 0
}

// parse reads the hook's arguments as gpuprof's hook commands take them:
// the name (slurmd's SLURM_SCRIPT_CONTEXT without one; arguments after it
// ignored) and --config, --db, --log-level in any order, as --flag value
// or --flag=value. err is a bad flag; help is -h or --help.
func parse(args []string, getenv func(string) string) (f flags, help bool, err error) {
	var rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			rest = append(rest, args[i+1:]...)
			break
		}
		if a == "-h" || a == "--help" {
			return f, true, nil
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			rest = append(rest, a)
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		var dst *string
		var set *bool
		switch {
		case !strings.HasPrefix(a, "--"):
			if err == nil {
				err = fmt.Errorf("unknown shorthand flag: %q in %s", strings.TrimPrefix(a, "-")[:1], a)
			}
			continue
		case name == "config":
			dst, set = &f.config, &f.configSet
		case name == "db":
			dst, set = &f.db, &f.dbSet
		case name == "log-level":
			dst, set = &f.level, &f.lvlSet
		default:
			if err == nil {
				err = fmt.Errorf("unknown flag: --%s", name)
			}
			continue
		}
		if !hasValue {
			if i+1 >= len(args) {
				if err == nil {
					err = fmt.Errorf("flag needs an argument: --%s", name)
				}
				continue
			}
			i++
			value = args[i]
		}
		*dst, *set = value, true
	}
	f.kind = hookbin.Kind(rest, getenv)
	return f, false, err
}

// settings reads what the thin hook needs of the configuration file: the
// agent's socket (the top-level socket) and hooks.deadline, each when
// written plainly (key = "value" on a line of its own, a comment after it
// allowed), else the default. It reads no more of TOML than that: the
// agent takes the hook only from a hook that read the same bytes
// (fwd.Hook.ConfigSum), so a value misread here can only hand the hook to
// the full one, and the deadline it reads bounds no more than the
// default's share unless the file sets it.
func settings(data []byte) (socket string, deadline time.Duration) {
	socket, deadline = defaultSocket, defaultDeadline
	table := ""
	inMultiline := false
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		// A line inside a multi-line string is not a key.
		if n := strings.Count(line, `"""`) + strings.Count(line, `'''`); n%2 == 1 {
			inMultiline = !inMultiline
			continue
		}
		if inMultiline || line == "" || line[0] == '#' {
			continue
		}
		if line[0] == '[' {
			header, _, _ := strings.Cut(line, "#")
			table = strings.TrimSpace(strings.Trim(strings.TrimSpace(header), "[] \t"))
			if strings.HasPrefix(line, "[[") {
				table = "[[" + table
			}
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		v, ok := plainString(strings.TrimSpace(value))
		if !ok {
			continue
		}
		switch key = strings.TrimSpace(key); {
		case table == "" && key == "socket" && v != "":
			socket = v
		case table == "hooks" && key == "deadline":
			if d, err := time.ParseDuration(v); err == nil && d > 0 && d <= maxDeadline {
				deadline = d
			}
		}
	}
	return socket, deadline
}

// plainString is the string value v writes, when it is one TOML basic
// string without escapes or one literal string, optionally followed by a
// comment.
func plainString(v string) (string, bool) {
	if len(v) < 2 || (v[0] != '"' && v[0] != '\'') {
		return "", false
	}
	end := strings.IndexByte(v[1:], v[0])
	if end < 0 {
		return "", false
	}
	s, after := v[1:1+end], strings.TrimSpace(v[2+end:])
	if (v[0] == '"' && strings.ContainsRune(s, '\\')) || (after != "" && after[0] != '#') {
		return "", false
	}
	return s, true
}
