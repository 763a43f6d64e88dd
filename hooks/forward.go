package hooks

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/gpuprof/gpuprof/config"
	"github.com/gpuprof/gpuprof/hookproto"
	"github.com/gpuprof/gpuprof/hookproto/fwd"
	"github.com/gpuprof/gpuprof/slurmext"
)

// Forwarder is the part of a prolog or epilog that the agent runs for
// gpuprof-hook, the thin hook binary, which forwards its environment
// (fwd.Hook) instead of reading the configuration and building the request
// itself (issue #41: a hook starts as fast as a small program). It builds
// the request the hook would have sent (Deps.request, as Prolog and
// Epilog do) from the hook's environment and the configuration file both
// read, and writes the hook's log lines where the hook would have (Setup's
// LogDest), its "done" line with via=agent included.
//
// What it does not take — another configuration than the agent's, an
// environment that does not parse, a request the agent fails — it refuses
// without a log line, and gpuprof-hook hands the hook to the full one
// (gpuprof-hook-full, else `gpuprof prolog|epilog`), which runs it as it
// always did (Run) and logs it once.
type Forwarder struct {
	// Config is the configuration file's, as a hook reading it has it:
	// before the agent's own flags and with slurm_conf as written (the
	// hook looks slurm.conf up in its own environment).
	Config     config.Config
	ConfigPath string
	// Sum is conffile.Sum of the file's bytes; "" (no file read) takes
	// no hook.
	Sum string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Request checks a forwarded hook and returns the agent request it stands
// for, and finish, which the agent calls with the request's outcome: on
// success it writes the hook's lines, else nothing (the full hook will).
func (f Forwarder) Request(h fwd.Hook) (req hookproto.Request, finish func(error), err error) {
	now := f.Now
	if now == nil {
		now = time.Now
	}
	kind := Kind(h.Kind)
	switch {
	case kind != KindProlog && kind != KindEpilog:
		return req, nil, fmt.Errorf("forwarded hook %q is neither a prolog nor an epilog", h.Kind)
	case f.Sum == "":
		return req, nil, errors.New("the agent read no configuration file: forwarded hooks are the full hook's")
	case h.ConfigSum != f.Sum:
		return req, nil, fmt.Errorf("%w: %s when the agent started (sum %s, the hook's %s)", fwd.ErrOtherConfig, f.ConfigPath, f.Sum, h.ConfigSum)
	}
	env, err := slurmext.ParseHookEnv(h.Getenv)
	if err != nil {
		return req, nil, fmt.Errorf("bad environment: %w", err)
	}
	level := ParseLevel(h.LogLevel)
	held := &heldLines{level: level}
	log := slog.New(held)
	for _, p := range env.Problems {
		log.Warn("environment problem", "job", env.JobID, "problem", p)
	}
	roots := slurmext.ConfRootsFrom(h.Getenv)
	d := Deps{Config: f.Config, ConfigPath: f.ConfigPath, Env: env, Log: log, Now: now, ConfRoots: &roots}
	req = d.request(kind)
	began := h.Began
	if began.IsZero() {
		// A hook that did not say when it began: from when the agent
		// got it.
		began = now()
	}
	finish = func(err error) {
		if err != nil {
			return
		}
		out, _, closeLog := LogDest{Dest: f.Config.LogFile, SpoolDir: f.Config.SpoolDir, Level: level}.Open("hook", string(kind))
		defer closeLog()
		ctx := context.Background()
		for _, r := range held.records {
			_ = out.Handler().Handle(ctx, r)
		}
		out.Info("done", "job", env.JobID, "via", string(ViaAgent), "err", nil, "took", max(now().Sub(began), 0).Round(time.Microsecond))
	}
	return req, finish, nil
}

// ParseLevel is a hook's --log-level: debug, info, warn or error; info
// when it names none.
func ParseLevel(s string) slog.Level {
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return slog.LevelInfo
	}
	return l
}

// heldLines keeps a forwarded hook's log records until the agent knows
// whether it took the hook: its attributes (With) go before each record's
// own, as a logger's would.
type heldLines struct {
	level   slog.Level
	attrs   []slog.Attr
	records []slog.Record
	into    *heldLines // the handler With was called on: records go there
}

func (h *heldLines) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level }

func (h *heldLines) Handle(_ context.Context, r slog.Record) error {
	root := h
	for root.into != nil {
		root = root.into
	}
	if len(h.attrs) > 0 {
		n := slog.NewRecord(r.Time, r.Level, r.Message, r.PC)
		n.AddAttrs(h.attrs...)
		r.Attrs(func(a slog.Attr) bool { n.AddAttrs(a); return true })
		r = n
	}
	root.records = append(root.records, r.Clone())
	return nil
}

func (h *heldLines) WithAttrs(as []slog.Attr) slog.Handler {
	return &heldLines{level: h.level, attrs: append(append([]slog.Attr(nil), h.attrs...), as...), into: h}
}

// WithGroup is not used by the hooks' lines; a group's attributes are
// kept ungrouped.
func (h *heldLines) WithGroup(string) slog.Handler { return h }
