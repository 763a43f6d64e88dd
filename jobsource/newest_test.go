package jobsource

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/store"
)

// TestScopeReadsNewestWithItsCluster: a Scope's read of the newest jobs
// (Query.Newest, the TUI's summary through monthly.SummaryMonth) takes
// them in the list's order, a page at a time, with the clock asked for,
// and binds after the read the Slurm configuration of the one cluster
// they are of (ConfOfRead: a slurm.conf of another cluster is said, not
// an error); jobs of two clusters get none.
func TestScopeReadsNewestWithItsCluster(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := store.Open(ctx, filepath.Join(dir, "gpuprof.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	base := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	const jobs = newestPage + 150
	put := func(cluster, id string, start time.Time) {
		t.Helper()
		r := slurmext.JobRecord{Cluster: cluster, JobID: id, User: "alice", UID: 1001, State: "COMPLETED",
			Submit: start, Start: start, End: start.Add(time.Minute), ArrayTaskID: -1, HetOffset: -1, CancelledBy: -1}
		if err := db.PutSchedJob(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	for i := range jobs {
		put("c", strconv.Itoa(10000+i), base.Add(time.Duration(i)*time.Minute))
	}
	conf := filepath.Join(dir, "slurm.conf")
	if err := os.WriteFile(conf, []byte("ClusterName=other\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	src := ForCaller(db, store.Caller{Admin: true})
	defer src.Close()
	src.cfg.SlurmConf = conf
	sc := src.Scope()
	now := base.AddDate(0, 0, 20)
	month := analysis.Window{From: base, To: base.AddDate(0, 1, 0)}
	q := Query{Window: month, Now: now, Jobs: jobs, Newest: jobs - 20, ConfOfRead: true}
	in, err := sc.Input(ctx, q, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Jobs) != jobs-20 || !in.Now.Equal(now) {
		t.Fatalf("read %d jobs at %v, want the newest %d at %v", len(in.Jobs), in.Now, jobs-20, now)
	}
	oldest := in.Jobs[0].Start
	for _, j := range in.Jobs {
		if j.Start.Before(oldest) {
			oldest = j.Start
		}
	}
	if want := base.Add(20 * time.Minute); !oldest.Equal(want) {
		t.Errorf("oldest job read started %v, want %v (the 20 oldest left out)", oldest, want)
	}
	if in.Conf.Cluster != "c" || !strings.Contains(in.Conf.NotUsed, "is cluster other's, the jobs are c's: not used") {
		t.Errorf("conf = %+v, want cluster c's with the line on the other cluster's slurm.conf", in.Conf)
	}

	put("d", "9", base.AddDate(0, 0, 2))
	in, err = sc.Input(ctx, Query{Window: month, Newest: 5000, ConfOfRead: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Jobs) != jobs+1 || in.Conf != (analysis.ConfUse{}) {
		t.Errorf("two clusters: read %d jobs with conf %+v, want %d and none bound", len(in.Jobs), in.Conf, jobs+1)
	}
}
