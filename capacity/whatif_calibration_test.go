package capacity

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
)

// heldMonth is the healthy month as if every job had been held by its
// user for 2–8 minutes after it became eligible (scontrol hold, then
// release), with GPUs free: the observed waits come from a cause the
// model lacks, and the replay starts each job when it is eligible.
func heldMonth(t testing.TB) analysis.Input {
	in := healthyMonth(t)
	r := rand.New(rand.NewPCG(26, 5))
	for i := range in.Jobs {
		j := &in.Jobs[i]
		hold := time.Duration(120+r.IntN(361)) * time.Second
		j.Start, j.End = j.Start.Add(hold), j.End.Add(hold)
		j.Reason = "JobHeldUser"
	}
	return in
}

// TestCalibrationSaysWhatItExplains ("What must be shown" 4 of issue
// #26): the replay reproduces none of the observed waits. Against the
// 1 h target the error is small and the calibration good, but it says
// that the replay reproduces less than half of partition gpu's observed
// p95 wait, and that the error is small against the target; against a
// 5-minute target the same error makes it poor (the thresholds follow
// the target).
func TestCalibrationSaysWhatItExplains(t *testing.T) {
	in := heldMonth(t)
	w, err := RunWhatIf(in, WhatIfParams{Seeds: 1})
	if err != nil {
		t.Fatal(err)
	}
	c := w.Calibration
	t.Logf("calibration: %+v", c)
	if len(c.Partitions) != 1 {
		t.Fatalf("partitions %+v", c.Partitions)
	}
	p := c.Partitions[0]
	if p.ObservedP95 < 300 || p.SimulatedP95 > 60 {
		t.Fatalf("planted: observed p95 %.0f s, replayed %.0f s: want minutes observed, none replayed", p.ObservedP95, p.SimulatedP95)
	}
	if p.ReproducedP95 == nil || *p.ReproducedP95 > 0.1 || p.ReproducedWait == nil || *p.ReproducedWait > 0.1 {
		t.Errorf("reproduced share of the p95 %v, of the wait %v: want about 0", p.ReproducedP95, p.ReproducedWait)
	}
	if !c.Reliable {
		t.Errorf("problems %q: the error is small against the 1h target", c.Problems)
	}
	if c.TargetP95Wait != 3600 {
		t.Errorf("target %.0f s, want the default 1h", c.TargetP95Wait)
	}
	if len(c.Unreproduced) != 1 {
		t.Fatalf("unreproduced %q: want partition gpu named", c.Unreproduced)
	}
	for _, want := range []string{"partition gpu", "less than half", "small against the 01:00:00 target"} {
		if !strings.Contains(c.Unreproduced[0], want) {
			t.Errorf("%q does not say %q", c.Unreproduced[0], want)
		}
	}

	// Against a 5-minute target the same error is not small.
	w, err = RunWhatIf(in, WhatIfParams{Seeds: 1, Target: 5 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	c = w.Calibration
	t.Logf("calibration against 5 min: problems %q, unreproduced %q", c.Problems, c.Unreproduced)
	if c.Reliable || len(c.Unreproduced) != 1 || strings.Contains(c.Unreproduced[0], "small against") {
		t.Errorf("against a 5-minute target: reliable %v, unreproduced %q: want poor, partition gpu named without \"small\"", c.Reliable, c.Unreproduced)
	}

	// The plan's verdict carries it in its evidence.
	f, sp := simulate(t, in, planConfig(2), analysis.PlanParams{})
	t.Log(describe(f, sp))
	found := false
	for _, e := range sp.Verdict.Evidence {
		found = found || strings.Contains(e, "less than half") && strings.Contains(e, "partition gpu")
	}
	if !found {
		t.Errorf("verdict evidence %q does not say the replay reproduces less than half of partition gpu's wait", sp.Verdict.Evidence)
	}
}

// TestCalibrationReproducedOnARecordedQueue: on a month whose records are
// the model's own replay, every partition's wait is reproduced and
// nothing is said.
func TestCalibrationReproducedOnARecordedQueue(t *testing.T) {
	w, err := RunWhatIf(shortOfH100(t, 8), WhatIfParams{Seeds: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range w.Calibration.Partitions {
		if p.ReproducedP95 == nil || *p.ReproducedP95 < 0.9 || *p.ReproducedP95 > 1.1 {
			t.Errorf("partition %s: reproduced share of the p95 %v, want about 1", p.Partition, p.ReproducedP95)
		}
	}
	if len(w.Calibration.Unreproduced) != 0 {
		t.Errorf("unreproduced %q on a month the model recorded", w.Calibration.Unreproduced)
	}
}
