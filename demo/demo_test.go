package demo

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/store"
)

// smallMonth is two days on the two H100 nodes: every template still
// submits once in the first six hours, so every kind of work shows.
func smallMonth(t *testing.T, seed uint64) (Summary, []store.JobView) {
	t.Helper()
	dir := t.TempDir()
	s, err := Month(context.Background(), MonthOptions{Dir: dir, Seed: seed, Days: 2, Nodes: DefaultNodes()[:2]})
	if err != nil {
		t.Fatalf("Month: %v", err)
	}
	db, err := store.Open(context.Background(), s.DB, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	views, err := db.ReaderFor(store.System).ListViews(context.Background(), store.ViewFilter{WithSeries: true})
	if err != nil {
		t.Fatal(err)
	}
	return s, views
}

func TestMonthRecordsEveryJobAndEveryClass(t *testing.T) {
	s, views := smallMonth(t, 7)
	if len(views) != s.Jobs || s.Jobs == 0 {
		t.Fatalf("%d job views in the database, want the %d jobs simulated (> 0)", len(views), s.Jobs)
	}
	c := analysis.DefaultConfig()
	classes := map[analysis.Class]int{}
	for _, v := range views {
		if v.Sched == nil {
			t.Errorf("job %s: no scheduler view (jobcomp record)", v.JobID)
			continue
		}
		if len(v.Profiles) != 1 {
			t.Errorf("job %s: %d node profiles, want 1", v.JobID, len(v.Profiles))
			continue
		}
		if got, want := v.Profiles[0].Node, v.Sched.NodeList; got != want {
			t.Errorf("job %s: profile from node %s, scheduler says %s", v.JobID, got, want)
		}
		cls, _ := analysis.Classify(analysis.FromView(v.Sched, v.Profiles), c)
		classes[cls]++
	}
	for _, want := range []analysis.Class{
		analysis.ClassLongTraining, analysis.ClassShortDebug, analysis.ClassInferenceService,
		analysis.ClassPreprocessingIO, analysis.ClassIdleAllocation,
	} {
		if classes[want] == 0 {
			t.Errorf("no %s job; classes seen: %v", want, classes)
		}
	}
	if classes[analysis.ClassUnknown] != 0 {
		t.Errorf("%d jobs of class unknown: every simulated job has GPU readings", classes[analysis.ClassUnknown])
	}
	if s.Failed == 0 {
		t.Errorf("no failed job in %d", s.Jobs)
	}
}

func TestMonthIsDeterministic(t *testing.T) {
	gpuHours := func(views []store.JobView) float64 {
		var jobs []analysis.Job
		for _, v := range views {
			jobs = append(jobs, analysis.FromView(v.Sched, v.Profiles))
		}
		return analysis.Summarise(jobs, analysis.DefaultConfig()).GPUHours
	}
	a, va := smallMonth(t, 3)
	b, vb := smallMonth(t, 3)
	if a.Jobs != b.Jobs || len(va) != len(vb) {
		t.Errorf("same seed: %d and %d jobs (%d and %d views)", a.Jobs, b.Jobs, len(va), len(vb))
	}
	if ga, gb := gpuHours(va), gpuHours(vb); ga != gb || ga == 0 {
		t.Errorf("same seed: %v and %v recorded GPU-hours, want equal and > 0", ga, gb)
	}
	if a.GPUHours != b.GPUHours {
		t.Errorf("same seed: %v and %v allocated GPU-hours", a.GPUHours, b.GPUHours)
	}
	c, _ := smallMonth(t, 4)
	if c.Jobs == a.Jobs && math.Abs(c.GPUHours-a.GPUHours) < 1e-9 {
		t.Errorf("seeds 3 and 4 gave the same month (%d jobs, %v GPU-hours)", a.Jobs, a.GPUHours)
	}
}

func TestMonthOptionsRejected(t *testing.T) {
	tests := []struct {
		name string
		opts MonthOptions
	}{
		{name: "no dir", opts: MonthOptions{}},
		{name: "negative days", opts: MonthOptions{Dir: "x", Days: -1}},
		{name: "interval under a second", opts: MonthOptions{Dir: "x", Interval: time.Millisecond}},
		{name: "no nodes", opts: MonthOptions{Dir: "x", Nodes: []NodeSpec{}}},
		{name: "repeated node", opts: MonthOptions{Dir: "x", Nodes: []NodeSpec{DefaultNodes()[0], DefaultNodes()[0]}}},
		{name: "job larger than any node", opts: MonthOptions{Dir: "x", Nodes: DefaultNodes()[3:], Workload: []Template{{User: "u", Name: "n", Model: "l40s", GPUs: 4, PerDay: 1, RunMin: time.Hour, RunMax: time.Hour, Limit: time.Hour}}}},
		{name: "submission window backwards", opts: MonthOptions{Dir: "x", Workload: []Template{{User: "u", Name: "n", GPUs: 1, PerDay: 1, From: 18 * time.Hour, To: 8 * time.Hour, RunMin: time.Hour, RunMax: time.Hour, Limit: time.Hour}}}},
		{name: "template without GPUs", opts: MonthOptions{Dir: "x", Workload: []Template{{User: "u", Name: "n", PerDay: 1, RunMin: time.Hour, RunMax: time.Hour, Limit: time.Hour}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.opts.Dir != "" {
				tt.opts.Dir = filepath.Join(t.TempDir(), tt.opts.Dir)
			}
			if _, err := Month(context.Background(), tt.opts); !errors.Is(err, ErrOptions) {
				t.Errorf("Month error %v, want ErrOptions", err)
			}
		})
	}
}

// TestSlurmConfDescribesTheCluster: the demo's slurm.conf and gres.conf
// read back (slurmext's own readers) as the simulated cluster: its name,
// each node's typed GPUs and device files, its partitions and scheduler.
func TestSlurmConfDescribesTheCluster(t *testing.T) {
	conf := SlurmConf(nil, "/demo/slurmd")
	if got := slurmext.ReadClusterName(strings.NewReader(conf)); got != Cluster {
		t.Errorf("ClusterName %q, want %q", got, Cluster)
	}
	nodes, err := slurmext.ReadNodeGres(strings.NewReader(conf))
	if err != nil {
		t.Fatal(err)
	}
	sc, err := slurmext.ReadSchedConf(strings.NewReader(conf))
	if err != nil {
		t.Fatal(err)
	}
	specs := DefaultNodes()
	if len(nodes) != len(specs) {
		t.Fatalf("%d nodes, want %d", len(nodes), len(specs))
	}
	for i, n := range nodes {
		s := specs[i]
		if n.Name != s.Name || n.GPUs != s.GPUs || n.GPUType != s.Type {
			t.Errorf("node %+v, want %s with %d %s", n, s.Name, s.GPUs, s.Type)
		}
		gc, err := slurmext.ReadGresConf(strings.NewReader(GresConf(nil, "/demo/dev")), s.Name)
		if err != nil || len(gc.Devices) != s.GPUs || gc.Devices[0].Type != s.Type || gc.Devices[0].File != "/demo/dev/nvidia0" {
			t.Errorf("gres.conf of %s: %+v, %v", s.Name, gc, err)
		}
	}
	if sc.PriorityType != "priority/basic" || sc.SchedulerType != "sched/backfill" || len(sc.Partitions) != 2 ||
		sc.Partitions[0].Name != "gpu" || strings.Join(sc.Partitions[0].Nodes, ",") != "gpu01,gpu02,gpu03" || !sc.Partitions[0].MaxTimeUnlimited ||
		sc.Partitions[1].Name != "l40s" || strings.Join(sc.Partitions[1].Nodes, ",") != "gpu04" {
		t.Errorf("scheduler %+v", sc)
	}
	if slurmext.ReadSlurmConf(strings.NewReader(conf), "SlurmdSpoolDir") != "/demo/slurmd" {
		t.Errorf("SlurmdSpoolDir is not the demo's own")
	}
}
