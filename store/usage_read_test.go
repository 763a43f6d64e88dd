package store

import (
	"context"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/slurmext"
)

// TestSchedUsageRead (issue #30): whether an import read a job's CPU time
// and memory peak is kept (total_cpu_read, host_mem_peak_read) and read
// back, and a report that read nothing (jobcomp) does not erase it, in
// whichever order the reports come.
func TestSchedUsageRead(t *testing.T) {
	ctx := context.Background()
	start := t0.Add(time.Hour)
	end := start.Add(time.Hour)
	imported := sacctRec("21", "COMPLETED", start, end)
	imported.Usage.TotalCPURead, imported.Usage.MemPeakRead = true, true // steps read, MaxRSS empty
	jc := jobcompRec("21", "COMPLETED", start, end)
	for _, tt := range []struct {
		name    string
		reports []slurmext.JobRecord
	}{
		{"sacct first", []slurmext.JobRecord{imported, jc}},
		{"jobcomp first", []slurmext.JobRecord{jc, imported}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			db := openTest(t, Options{})
			for _, r := range tt.reports {
				if err := db.PutSchedJob(ctx, r); err != nil {
					t.Fatal(err)
				}
			}
			got, err := db.GetSchedJob(ctx, imported.Cluster, "21")
			if err != nil {
				t.Fatal(err)
			}
			if u := got.Usage; !u.TotalCPURead || !u.MemPeakRead || u.MemPeakValid || u.TotalCPUValid {
				t.Errorf("usage %+v, want both read and both unknown", u)
			}
		})
	}
	t.Run("jobcomp only", func(t *testing.T) {
		db := openTest(t, Options{})
		if err := db.PutSchedJob(ctx, jc); err != nil {
			t.Fatal(err)
		}
		got, err := db.GetSchedJob(ctx, jc.Cluster, "21")
		if err != nil {
			t.Fatal(err)
		}
		if got.Usage.TotalCPURead || got.Usage.MemPeakRead {
			t.Errorf("usage %+v, want nothing read", got.Usage)
		}
	})
}
