package main

import (
	"fmt"
	"io"
	"log/slog"
	"log/syslog"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/gpuprof/gpuprof/config"
	"github.com/gpuprof/gpuprof/internal/groupdir"
	"github.com/gpuprof/gpuprof/internal/safefs"
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

// globalOptions are the flags every command takes.
type globalOptions struct {
	ConfigPath string
	DB         string
	LogLevel   string
}

func (g *globalOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&g.ConfigPath, "config", "", "configuration file (default $GPUPROF_CONFIG, else "+config.DefaultPath+")")
	fs.StringVar(&g.DB, "db", "", "database path (overrides the configuration)")
	fs.StringVar(&g.LogLevel, "log-level", "info", "log level: debug, info, warn, error")
}

// configPath returns the file to read and whether it was asked for.
func (g *globalOptions) configPath() (string, bool) {
	if g.ConfigPath != "" {
		return g.ConfigPath, true
	}
	if p := os.Getenv("GPUPROF_CONFIG"); p != "" {
		return p, true
	}
	return config.DefaultPath, false
}

func (g *globalOptions) load() (config.Config, error) {
	path, explicit := g.configPath()
	c, err := config.Load(path, explicit)
	if err != nil {
		return c, err
	}
	if g.DB != "" {
		c.DB = g.DB
	}
	return c, nil
}

func (g *globalOptions) level() slog.Level {
	var l slog.Level
	if err := l.UnmarshalText([]byte(g.LogLevel)); err != nil {
		return slog.LevelInfo
	}
	return l
}

// newLogger logs one line per event to the configured file, to syslog, or
// to fallback. A log that cannot be opened is not fatal: it goes to
// fallback and says why. The file's directory is created (0750) when
// missing, so a node without systemd (nothing made /var/log/gpuprof) still
// gets its log file. Hooks use newHookLogger instead: they must never write
// to stdout or stderr.
func newLogger(dest string, fallback io.Writer, level slog.Level, attrs ...any) (*slog.Logger, func()) {
	var w io.Writer = fallback
	closeFn := func() {}
	var openErr error
	switch dest {
	case "":
	case "syslog":
		if sw, err := dialSyslog(); err == nil {
			w, closeFn = sw, func() { sw.Close() }
		} else {
			openErr = err
		}
	default:
		if f, err := openLogFile(dest); err == nil {
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

// hookLog says where a Slurm hook's log lines go. The hooks run with
// slurmd's or slurmctld's stdout and stderr, which must stay quiet, so
// every destination is a file or syslog, tried in order: Dest (log_file;
// empty or "syslog" means syslog), then SpoolDir/hooks.log (root's own
// directory, present on every node that records jobs), then nowhere.
type hookLog struct {
	Dest     string
	SpoolDir string
	Level    slog.Level
	// Syslog connects to the local syslog; nil means log/syslog's, which
	// fails when no daemon listens (no /dev/log).
	Syslog func() (io.WriteCloser, error)
}

// hookLogName is the file under spool_dir that takes a hook's lines when
// neither log_file nor syslog can; the spool reader skips it (not a record
// name), and contrib/logrotate/gpuprof rotates it.
const hookLogName = "hooks.log"

// open returns the logger, the file it writes to when it is a file (for a
// crash's stack, see hookSetup; nil for syslog or nowhere) and a close
// function. Why a destination was skipped is the first line logged.
func (h hookLog) open(attrs ...any) (*slog.Logger, *os.File, func()) {
	dial := h.Syslog
	if dial == nil {
		dial = func() (io.WriteCloser, error) { return dialSyslog() }
	}
	var w io.Writer = io.Discard
	var file *os.File
	closeFn := func() {}
	type skip struct {
		dest string
		err  error
	}
	var skipped []skip
	tryFile := func(path string) bool {
		f, err := openLogFile(path)
		if err != nil {
			skipped = append(skipped, skip{path, err})
			return false
		}
		w, file, closeFn = f, f, func() { f.Close() }
		return true
	}
	opened := false
	if h.Dest == "" || h.Dest == "syslog" {
		if sw, err := dial(); err == nil {
			w, closeFn, opened = sw, func() { sw.Close() }, true
		} else {
			skipped = append(skipped, skip{"syslog", err})
		}
	} else {
		opened = tryFile(h.Dest)
	}
	if !opened && h.SpoolDir != "" {
		if dir, err := safefs.MkdirAll(h.SpoolDir, 0o700); err != nil {
			skipped = append(skipped, skip{h.SpoolDir, err})
		} else {
			dir.Close()
			opened = tryFile(filepath.Join(h.SpoolDir, hookLogName))
		}
	}
	l := slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: h.Level})).With(attrs...)
	for _, sk := range skipped {
		l.Warn("log destination unavailable", "dest", sk.dest, "err", sk.err)
	}
	return l, file, closeFn
}

// openLogFile opens path for appending, creating its directory (0750) and
// the file when missing: 0640, or 0660 in a set-group-ID directory whose
// group's service users all log there (groupdir), whatever the umask.
//
// The packaged /var/log/gpuprof (and spool_dir, the hooks' last resort) is
// root:gpuprof 2770: the group's accounts may plant a link, a hard link or
// a FIFO where root's log goes. So the directory is opened with no planted
// link followed and the file within it with O_NOFOLLOW, created with
// O_EXCL or else taken only as a regular file with no other name (package
// safefs; a link is followed only where root alone could have made it);
// anything else is refused, and the caller logs to its next destination,
// saying why.
func openLogFile(path string) (*os.File, error) {
	dir, name, err := safefs.OpenFileDir(path, 0o750)
	if err != nil {
		return nil, fmt.Errorf("create log directory: %w", err)
	}
	defer dir.Close()
	fi, err := dir.Stat()
	if err != nil {
		return nil, err
	}
	return dir.OpenAppend(name, groupdir.ModeIn(fi))
}

func dialSyslog() (*syslog.Writer, error) {
	return syslog.New(syslog.LOG_DAEMON|syslog.LOG_INFO, "gpuprof")
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
		newGenDocsCommand(),
	)
	registerCompletions(root, g)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	return root
}

func printf(w io.Writer, format string, a ...any) { _, _ = fmt.Fprintf(w, format, a...) }
