package store

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/gpu"
	"github.com/gpuprof/gpuprof/profile"
)

// ThinSeries thins the old finished profiles' series to the bound and
// nothing else: every figure the analysis reads from a profile (the facts
// show and the terminal UI print, the class, the bottlenecks) is the same
// after it; a running profile and one ended since the cut keep every point.
func TestThinSeriesKeepsEveryFigure(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, Options{})
	old := richJob("1", t0, 3000, true)
	for i := range old.GPUs {
		for k := range 3000 {
			at := t0.Add(time.Duration(k) * time.Second)
			old.GPUs[i].Observe(profile.Reading{Time: at, Util: gpu.Some(uint32(k * 13 % 101)), MemUsed: gpu.Some(uint64(30<<30 + (k%61)<<20)),
				Activity: gpu.Some(gpu.Activity{SM: gpu.Some(float64(k%83) + 0.5), Tensor: gpu.Some(float64(k%7) / 3)}), ActivityScope: "device"}, time.Second)
		}
	}
	old.Finish(t0.Add(3000 * time.Second))
	recent := richJob("2", t0.Add(48*time.Hour), 3000, true)
	running := richJob("3", t0, 3000, false)
	for _, j := range []profile.Job{old, recent, running} {
		if err := db.PutJob(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	read := func(id string) profile.Job {
		t.Helper()
		j, err := db.GetJob(ctx, profile.Key{Cluster: "lab", JobID: id, Node: "gpu01"})
		if err != nil {
			t.Fatal(err)
		}
		return j
	}
	conf := analysis.DefaultConfig()
	figures := func(j profile.Job) (analysis.Job, analysis.Class, []analysis.Bottleneck) {
		a := analysis.FromView(nil, []profile.Job{j})
		c, _ := analysis.Classify(a, conf)
		return a, c, analysis.Diagnose(a, conf)
	}
	before := map[string]profile.Job{"1": read("1"), "2": read("2"), "3": read("3")}
	jobBefore, classBefore, diagBefore := figures(before["1"])
	if !jobBefore.GPUs[0].VRAMFloorValid || !jobBefore.GPUs[0].ActivityValid {
		t.Fatal("the planted job has no memory floor or activity: the test would not test them")
	}

	cut := t0.Add(24 * time.Hour)
	var total int
	for {
		var n int
		if err := db.WithTx(ctx, func(tx *Tx) (err error) { n, err = tx.ThinSeries(ctx, cut, 128, 1); return err }); err != nil {
			t.Fatal(err)
		}
		total += n
		if n == 0 {
			break
		}
	}
	if total != 1 {
		t.Errorf("thinned %d profiles, want 1 (the old finished one)", total)
	}
	after := read("1")
	for _, g := range after.GPUs {
		if len(g.Series.Points) > 128 || g.Series.Thinned == nil {
			t.Errorf("gpu %s: %d points, thinned %v; want ≤ 128, thinned", g.UUID, len(g.Series.Points), g.Series.Thinned != nil)
		}
	}
	jobAfter, classAfter, diagAfter := figures(after)
	if !reflect.DeepEqual(jobAfter, jobBefore) {
		for i := range jobAfter.GPUs {
			if !reflect.DeepEqual(jobAfter.GPUs[i], jobBefore.GPUs[i]) {
				t.Errorf("gpu %d after thinning:\n%+v\nwant\n%+v", i, jobAfter.GPUs[i], jobBefore.GPUs[i])
			}
		}
		t.Error("the job's figures changed with thinning")
	}
	if classAfter != classBefore || !reflect.DeepEqual(diagAfter, diagBefore) {
		t.Errorf("class %v, bottlenecks %+v after thinning; want %v, %+v", classAfter, diagAfter, classBefore, diagBefore)
	}
	for _, id := range []string{"2", "3"} {
		if got := read(id); !reflect.DeepEqual(got, before[id]) {
			t.Errorf("job %s (ended after the cut, or running) changed", id)
		}
	}
}
