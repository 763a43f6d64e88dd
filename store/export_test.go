package store

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/profile"
)

// openAtVersion opens (creating) the database at path with the schema of
// version, as a release of that schema wrote it, so tests can fill it and
// then let Open migrate it.
func openAtVersion(t testing.TB, path string, version int) *DB {
	t.Helper()
	db, err := openAt(context.Background(), path, Options{}, version)
	if err != nil {
		t.Fatalf("open at schema version %d: %v", version, err)
	}
	return db
}

// putLegacyJob writes j as gpuprof wrote profiles up to schema version 5:
// each GPU's whole profile.GPU, series points and all, in job_gpus.state.
// Tests of migrations from those versions fill their databases with it.
func putLegacyJob(t testing.TB, db *DB, j profile.Job) {
	t.Helper()
	j = Normalize(j)
	err := db.WithTx(context.Background(), func(tx *Tx) error {
		reasons, err := json.Marshal(nonNil(j.PartialReasons))
		if err != nil {
			return err
		}
		// The jobs columns of version 5 (alloc_known and alloc_shards
		// came in 0010).
		legacyJobSQL := `INSERT INTO jobs (cluster, job_id, node, "user", uid, gid, account, "partition", comment,
			"start", "end", status, source, exit_known, exit_status, exit_signal,
			partial, partial_reasons, sample_interval_ms, last_sample,
			driver, cuda_driver, io_scope, io_stall_s, io_seconds, updated_at)
			VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`
		if _, err := tx.tx.Exec(legacyJobSQL, j.Cluster, j.JobID, j.Node, j.User, j.UID, j.GID, j.Account, j.Partition, j.Comment,
			unixOrNull(j.Start), unixOrNull(j.End), j.Status, j.Source, j.ExitKnown, j.ExitStatus, j.ExitSignal,
			j.Partial, string(reasons), j.SampleInterval.Milliseconds(), unixOrNull(j.LastSample),
			j.Driver, j.CUDADriver, j.IO.Scope, j.IO.StallSeconds, j.IO.Seconds, time.Now().Unix()); err != nil {
			return err
		}
		for i := range j.GPUs {
			g := &j.GPUs[i]
			args, err := gpuRow(j.Key, i, g)
			if err != nil {
				return err
			}
			state, err := json.Marshal(g)
			if err != nil {
				return err
			}
			args = args[:23] // up to state: no series_points before 0006, no activity before 0008
			args[22] = string(state)
			if _, err := tx.tx.Exec(`INSERT INTO job_gpus (cluster, job_id, node, uuid, position,
				slurm_index, minor, model, memory_total, shared, samples,
				util_mean, util_p50, util_p95, util_max, idle_fraction, mem_peak,
				energy_j, max_temp_c, xid_count, idle_allocation, preallocated, state)
				VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`, args...); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("put legacy job %s: %v", j.JobID, err)
	}
}
