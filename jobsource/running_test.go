package jobsource

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/config"
	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/store"
)

// TestRunningJobsNamedBySqueue: a running job without a scheduler
// record has its name from squeue (one run for every such job), as
// jobs, show, the TUI and the JSON show it; a job squeue gives another
// user (a reused id), another cluster's job, and a finished one are not
// named from it.
func TestRunningJobsNamedBySqueue(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := store.Open(ctx, filepath.Join(dir, "gpuprof.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	start := time.Now().Add(-time.Minute).Truncate(time.Second)
	put := func(cluster, id, user, status string) {
		j := profile.Job{Key: profile.Key{Cluster: cluster, JobID: id, Node: "gpu01"}, User: user, UID: 1001,
			Start: start, Status: status, Source: profile.SourceAgent}
		if status == profile.StatusFinished {
			j.End = start.Add(30 * time.Second)
		}
		if err := db.PutJob(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	put("lab", "8101", "alice", profile.StatusRunning)
	put("lab", "8102", "carol", profile.StatusRunning)   // squeue says bob's: an id reused
	put("other", "8103", "alice", profile.StatusRunning) // another cluster's job
	put("lab", "8104", "alice", profile.StatusFinished)
	squeue := filepath.Join(dir, "squeue")
	script := "#!/bin/sh\necho \"$*\" >>" + dir + "/squeue.args\nprintf '8101|alice|train resnet|50\\n8102|bob|x\\n8103|alice|y\\n8104|alice|z\\n'\n"
	if err := os.WriteFile(squeue, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.Cluster, cfg.Notices.Squeue = "lab", squeue
	s := &Source{db: db, caller: store.System, cfg: cfg}
	vs, err := s.Jobs(ctx, store.ViewFilter{})
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{}
	for _, v := range vs {
		if r := v.SchedView(); r != nil {
			names[v.Cluster+"/"+v.JobID] = r.Name
		}
	}
	want := map[string]string{"lab/8101": "train resnet|50", "lab/8102": "", "other/8103": ""}
	for k, w := range want {
		if names[k] != w {
			t.Errorf("%s: name %q, want %q", k, names[k], w)
		}
	}
	args, _ := os.ReadFile(filepath.Join(dir, "squeue.args"))
	if got, want := string(args), "--noheader --jobs=8101,8102 --format="+slurmext.SqueueIDUserName+"\n"; got != want {
		t.Errorf("squeue run as %q, want once as %q", got, want)
	}
	s.SkipNames()
	if vs, _ := s.Jobs(ctx, store.ViewFilter{}); len(vs) == 0 || vs[0].RunningName != "" {
		t.Errorf("SkipNames: still named")
	}
}
