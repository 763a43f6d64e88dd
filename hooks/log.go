package hooks

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/gpuprof/gpuprof/internal/logfile"
	"github.com/gpuprof/gpuprof/internal/safefs"
)

// LogDest says where a Slurm hook's log lines go. The hooks run with
// slurmd's or slurmctld's stdout and stderr, which must stay quiet, so
// every destination is a file or syslog, tried in order: Dest (log_file;
// empty or "syslog" means syslog), then SpoolDir/hooks.log (root's own
// directory, present on every node that records jobs), then nowhere.
type LogDest struct {
	Dest     string
	SpoolDir string
	Level    slog.Level
	// Syslog connects to the local syslog; nil means log/syslog's, which
	// fails when no daemon listens (no /dev/log).
	Syslog func() (io.WriteCloser, error)
}

// LogFileName is the file under spool_dir that takes a hook's lines when
// neither log_file nor syslog can; the spool reader skips it (not a record
// name), and contrib/logrotate/gpuprof rotates it.
const LogFileName = "hooks.log"

// Open returns the logger, the file it writes to when it is a file (for a
// crash's stack, see Setup; nil for syslog or nowhere) and a close
// function. Why a destination was skipped is the first line logged.
func (h LogDest) Open(attrs ...any) (*slog.Logger, *os.File, func()) {
	dial := h.Syslog
	if dial == nil {
		dial = func() (io.WriteCloser, error) { return logfile.DialSyslog() }
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
		f, err := logfile.Open(path)
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
			opened = tryFile(filepath.Join(h.SpoolDir, LogFileName))
		}
	}
	l := slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: h.Level})).With(attrs...)
	for _, sk := range skipped {
		l.Warn("log destination unavailable", "dest", sk.dest, "err", sk.err)
	}
	return l, file, closeFn
}
