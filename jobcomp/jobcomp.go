// Package jobcomp records the scheduler's view of a job from slurmctld's
// jobcomp/script hook. Slurm runs jobcomp scripts one at a time and waits
// for each with no timeout, so Record does one bounded thing: it makes the
// record durable in the spool (two fsyncs). The spool's reader on that host
// writes it to the database: the agent in the single-host setup, `gpuprof
// serve` on a collector, `gpuprof ingest` where neither runs
// (docs/architecture.md, "Data flow on the controller"). A database has one
// writer; slurmctld's hook is not it.
//
// It must not sample GPUs, talk to the node agent or open the database.
package jobcomp

import (
	"fmt"
	"log/slog"

	"github.com/gpuprof/gpuprof/hookproto"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/spool"
)

// Outcome says where the record went.
type Outcome string

// ViaSpool is Record's one outcome: the record waits in the spool for the
// database's writer.
const ViaSpool Outcome = "spool"

// Deps is what Record needs.
type Deps struct {
	SpoolDir string
	Log      *slog.Logger
}

// Record stores r in the spool as a hookproto.KindSchedJob record. The
// writer applies it with store.PutSchedJob, an idempotent merge, so a
// requeued job's PENDING report and its final report may arrive in any
// order, as may node profiles. The error says the record is lost: the
// spool could not take it.
func Record(d Deps, r slurmext.JobRecord) (Outcome, error) {
	if _, err := (spool.Dir{Path: d.SpoolDir}).Put(hookproto.KindSchedJob, r); err != nil {
		return "", fmt.Errorf("record lost: spool: %w", err)
	}
	return ViaSpool, nil
}
