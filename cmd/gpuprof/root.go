package main

import (
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gpuprof/gpuprof/cmd/internal/hookcmd"
	"github.com/gpuprof/gpuprof/internal/logfile"
)

// version is set with -ldflags "-X main.version=..."; see versionString.
var version = ""

func versionString() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}

// globalOptions are the flags every command takes (hookcmd.Options: one
// home for them, gpuprof-hook takes them too).
type globalOptions = hookcmd.Options

// newLogger logs one line per event to the configured file, to syslog, or
// to fallback. A log that cannot be opened is not fatal: it goes to
// fallback and says why. The file's directory is created (0750) when
// missing, so a node without systemd (nothing made /var/log/gpuprof) still
// gets its log file. Hooks use hooks.LogDest instead: they must never write
// to stdout or stderr.
func newLogger(dest string, fallback io.Writer, level slog.Level, attrs ...any) (*slog.Logger, func()) {
	var w io.Writer = fallback
	closeFn := func() {}
	var openErr error
	switch dest {
	case "":
	case "syslog":
		if sw, err := logfile.DialSyslog(); err == nil {
			w, closeFn = sw, func() { sw.Close() }
		} else {
			openErr = err
		}
	default:
		if f, err := logfile.Open(dest); err == nil {
			w, closeFn = f, func() { f.Close() }
		} else {
			openErr = err
		}
	}
	l := slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level})).With(attrs...)
	if openErr != nil {
		l.Warn("log destination unavailable", "dest", dest, "err", openErr)
	}
	return l, closeFn
}

func newRootCommand() *cobra.Command {
	g := &globalOptions{}
	root := &cobra.Command{
		Use:   "gpuprof",
		Short: "Per-job GPU profiles for Slurm clusters",
		Long: strings.TrimSpace(`
gpuprof records what Slurm jobs really do with their GPUs — VRAM peak,
utilisation over time, IO wait, energy, temperature, XID errors — on each GPU
node, and keeps it in SQLite.

On a GPU node: run "gpuprof agent" as a service and install "gpuprof prolog"
and "gpuprof epilog" as slurmd's Prolog and Epilog (see contrib/slurm).

Exit codes: 0 success (hooks always exit 0), 1 error, 2 usage error,
3 invalid configuration file.`),
		Version:       versionString(),
		SilenceUsage:  true,
		SilenceErrors: false,
	}
	g.AddFlags(root.PersistentFlags())
	root.AddCommand(
		newAgentCommand(g),
		newHookCommand(g, "prolog"),
		newHookCommand(g, "epilog"),
		newSimGPUCommand(g),
		newJobsCommand(g),
		newShowCommand(g),
		newIngestCommand(g),
		newJobCompCommand(g),
		newMailProgCommand(g),
		newAdminCommentCommand(g),
		newImportCommand(g),
		newServeCommand(g),
		newProfilesCommand(g),
		newDemoCommand(g),
		newRecommendCommand(g),
		newPlanCommand(g),
		newWhatifCommand(g),
		newReportCommand(g),
		newTUICommand(g),
		newNoticesCommand(g),
		newBackupCommand(g),
		newRestoreCommand(g),
		newGenDocsCommand(),
	)
	registerCompletions(root, g)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	return root
}

func printf(w io.Writer, format string, a ...any) { _, _ = fmt.Fprintf(w, format, a...) }
