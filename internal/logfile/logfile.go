// Package logfile opens gpuprof's log destinations as root may open them: a
// file in a directory the service group can write, without following
// anything the group planted there, and the local syslog.
//
// It chooses no destination: the daemons' logger (cmd/gpuprof) and the
// Slurm hooks' (hooks.LogDest) decide where their lines go and what they do
// when a destination cannot be opened.
package logfile

import (
	"fmt"
	"log/syslog"
	"os"

	"github.com/gpuprof/gpuprof/internal/groupdir"
	"github.com/gpuprof/gpuprof/internal/safefs"
)

// Open opens path for appending, creating its directory (0750) and the
// file when missing: 0640, or 0660 in a set-group-ID directory whose
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
func Open(path string) (*os.File, error) {
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

// DialSyslog connects to the local syslog as gpuprof, facility daemon.
func DialSyslog() (*syslog.Writer, error) {
	return syslog.New(syslog.LOG_DAEMON|syslog.LOG_INFO, "gpuprof")
}
