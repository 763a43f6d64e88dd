package main

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/gpuprof/gpuprof/internal/groupdir/groupdirtest"
	"github.com/gpuprof/gpuprof/internal/safefs/safefstest"
)

// The packaged /var/log/gpuprof and /var/lib/gpuprof/spool are
// root:gpuprof 2770: the gpuprof user and the SlurmUser may plant entries
// there, and root (the agent, the hooks) logs there. A planted link, hard
// link or FIFO where the log should be is refused: the lines go to the next
// destination, which says why, and the link's target (standing in for
// /etc/ld.so.preload, /etc, /etc/nologin) stays untouched. The tests run
// as root, whose planted links stand for the group's.

// TestLoggerRefusesPlantedLog: the agent's log_file (newLogger).
func TestLoggerRefusesPlantedLog(t *testing.T) {
	for _, how := range safefstest.LogPlantings {
		t.Run(how, func(t *testing.T) {
			tg := safefstest.New(t)
			path := safefstest.PlantLog(t, tg, groupdirtest.Dir(t, "gpuprof"), how)
			var fallback bytes.Buffer
			safefstest.Within(t, "newLogger", func() {
				log, closeLog := newLogger(path, &fallback, slog.LevelInfo, "component", "agent")
				log.Info("agent marker")
				closeLog()
			})
			if s := fallback.String(); !strings.Contains(s, "log destination unavailable") || !strings.Contains(s, "agent marker") {
				t.Errorf("fallback got %q, want the warning and the marker", s)
			}
			tg.Untouched(t)
		})
	}
}
