package analysis

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/gpu"
	"github.com/gpuprof/gpuprof/profile"
)

// withSM gives a GPU GPM's SM activity (and tensor activity) as the
// job's own.
func withSM(g GPU, sm float64) GPU {
	g.SMMean, g.SMP95, g.TensorMean, g.ActivityValid = sm, sm, sm/2, true
	g.ActivityScope, g.ActivitySeconds = profile.ActivityScopeGPU, 3600
	return g
}

func kindsOf(bs []Bottleneck) []string {
	var out []string
	for _, b := range bs {
		out = append(out, b.Kind.String())
	}
	return out
}

// TestLowSMActivity: a duty cycle that says busy beside an SM activity
// that says the kernels used almost none of the GPU is its own finding,
// saying how much of the SMs they used; a GPU without GPM never gets it.
func TestLowSMActivity(t *testing.T) {
	c := DefaultConfig()
	tests := []struct {
		name     string
		gpu      GPU
		want     []string
		wantRule string // the compute_bound rule, when found
		note     string
	}{
		{name: "tiny kernels", gpu: withSM(busy(90, 4), 0.02), want: []string{"underused", "low_sm_activity"},
			note: "kernels keep the GPU nominally busy but use 0.02 % of its SMs: small batches, launch-bound or CPU-bound input"},
		{name: "matmul", gpu: withSM(busy(94, 20), 92), want: []string{"compute_bound"}, wantRule: "compute_bound.sm"},
		{name: "busy duty cycle, SMs half used", gpu: withSM(busy(90, 20), 45), want: nil},
		{name: "no GPM", gpu: busy(90, 4), want: []string{"compute_bound"}, wantRule: "compute_bound"},
		{name: "shared GPU's device activity", gpu: func() GPU {
			g := withSM(busy(90, 4), 0.02)
			g.ActivityScope, g.Shared = profile.ActivityScopeSharedGPU, true
			return g
		}(), want: []string{"compute_bound"}, wantRule: "compute_bound"},
		{name: "quiet duty cycle", gpu: withSM(busy(8, 4), 0.02), want: []string{"underused"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Diagnose(job(2*time.Hour, tt.gpu), c)
			if k := kindsOf(got); !slices.Equal(k, tt.want) {
				t.Fatalf("kinds = %v, want %v (%v)", k, tt.want, got)
			}
			for _, b := range got {
				switch b.Kind {
				case KindLowSMActivity:
					if b.Reason.Note != tt.note {
						t.Errorf("note = %q, want %q", b.Reason.Note, tt.note)
					}
					if s := b.Reason.String(); !strings.Contains(s, "mean util 90 % ≥ 10 % and mean SM activity 0.02 % < 22 %") {
						t.Errorf("reason = %q", s)
					}
				case KindComputeBound:
					if b.Reason.Rule != tt.wantRule {
						t.Errorf("rule = %q, want %q", b.Reason.Rule, tt.wantRule)
					}
				}
			}
		})
	}
}

// TestIdleBySMActivity: where GPM measured the job's own activity, the
// idle rules read SM activity and the reason names it; elsewhere the duty
// cycle, as before.
func TestIdleBySMActivity(t *testing.T) {
	c := DefaultConfig()
	j := job(2*time.Hour, withSM(busy(20, 4), 0.5))
	cls, why := Classify(j, c)
	if cls != ClassIdleAllocation {
		t.Fatalf("class = %v (%v), want idle_allocation", cls, why)
	}
	if got := why[0].Checks[0].Metric; got != MetricSMMean {
		t.Errorf("idle rule read %q, want %q", got, MetricSMMean)
	}
	if s := why[0].String(); !strings.HasPrefix(s, "mean SM activity 0.5 % < 5 %") {
		t.Errorf("reason = %q", s)
	}
	m := Measure(j, c)
	if m.UnusedGPUs != 1 {
		t.Errorf("unused GPUs = %d, want 1", m.UnusedGPUs)
	}
	if v, measure, ok := m.Compute(); !ok || measure != MetricSMMean || v != 0.5 {
		t.Errorf("Compute() = %v %v %v", v, measure, ok)
	}

	// The duty cycle alone: 20 % is not idle.
	if cls, _ := Classify(job(2*time.Hour, busy(20, 4)), c); cls == ClassIdleAllocation {
		t.Errorf("without GPM: class = %v", cls)
	}
	// One GPU of two without GPM: the job's measure is the duty cycle,
	// the GPU with GPM is still judged by its SMs.
	two := job(2*time.Hour, withSM(busy(20, 4), 0.5), busy(20, 4))
	m = Measure(two, c)
	if _, measure, _ := m.Compute(); measure != MetricUtilMean {
		t.Errorf("mixed GPUs: measure %q, want %q", measure, MetricUtilMean)
	}
	if m.UnusedGPUs != 1 || m.SMGPUs != 1 {
		t.Errorf("mixed GPUs: unused %d, SM GPUs %d; want 1, 1", m.UnusedGPUs, m.SMGPUs)
	}
}

// TestSummaryMeasures: the summary says for how many jobs the rules read
// SM activity and for how many only the duty cycle.
func TestSummaryMeasures(t *testing.T) {
	s := Summarise([]Job{
		job(2*time.Hour, withSM(busy(90, 4), 0.02)),
		job(2*time.Hour, busy(90, 4)),
		job(2*time.Hour, busy(50, 4)),
	}, DefaultConfig())
	if s.BySMActivity != 1 || s.ByDutyCycle != 2 {
		t.Errorf("by SM activity %d, by duty cycle %d; want 1, 2", s.BySMActivity, s.ByDutyCycle)
	}
	if got := s.ByBottleneck[KindLowSMActivity]; got.Jobs != 1 || !approx(got.GPUHours, 2) {
		t.Errorf("low_sm_activity share = %+v", got)
	}
}

// TestFromViewActivity: a profile's GPM activity reaches the analysis; a
// GPU without it is unknown, never 0; XIDs are counted by class.
func TestFromViewActivity(t *testing.T) {
	start := t0
	d := gpu.Device{UUID: "GPU-a", Name: h100, MemoryTotal: card}
	g := profile.NewGPU(d, 0, start, time.Second, 100)
	noGPM := profile.NewGPU(gpu.Device{UUID: "GPU-b", Name: "NVIDIA A100-SXM4-80GB", MemoryTotal: card}, 1, start, time.Second, 100)
	for i := range 10 {
		now := start.Add(time.Duration(i+1) * time.Second)
		act := gpu.Activity{Interval: time.Second, SM: gpu.Some(0.02), Tensor: gpu.Some(0.0), DRAM: gpu.Some(1.0)}
		g.Observe(profile.Reading{Time: now, Util: gpu.Some(uint32(90)), MemUsed: gpu.Some(4 * gib), Processes: 1,
			Activity: gpu.Some(act), ActivityScope: profile.ActivityScopeGPU}, time.Second)
		noGPM.Observe(profile.Reading{Time: now, Util: gpu.Some(uint32(90)), MemUsed: gpu.Some(4 * gib), Processes: 1}, time.Second)
	}
	g.AddXID(79, start.Add(time.Second))
	g.AddXID(13, start.Add(2*time.Second))
	g.AddXID(48, start.Add(3*time.Second))
	p := profile.Job{Key: profile.Key{Cluster: "c1", JobID: "1", Node: "gpu01"}, Start: start, End: start.Add(10 * time.Second),
		GPUs: []profile.GPU{g, noGPM}}
	j := FromView(nil, []profile.Job{p})
	if len(j.GPUs) != 2 {
		t.Fatalf("GPUs = %d", len(j.GPUs))
	}
	a, b := j.GPUs[0], j.GPUs[1]
	if !a.ActivityValid || !approx(a.SMMean, 0.02) || a.ActivityScope != profile.ActivityScopeGPU || a.UUID != "GPU-a" {
		t.Errorf("GPU with GPM: %+v", a)
	}
	if a.XIDs != 3 || a.XIDsHardware != 2 {
		t.Errorf("XIDs %d, hardware %d; want 3, 2", a.XIDs, a.XIDsHardware)
	}
	if b.ActivityValid || b.SMMean != 0 {
		t.Errorf("GPU without GPM has activity: %+v", b)
	}
}

// TestWorkloadEffectiveAndXIDs: per model and account, GPU-hours weighted
// by SM activity beside the allocated ones with their coverage; hardware
// XIDs per GPU apart from the programs'.
func TestWorkloadEffectiveAndXIDs(t *testing.T) {
	start := utc(time.March, 3, 0, 0)
	a := withSM(busy(90, 4), 40)
	a.UUID = "GPU-a"
	a.XIDs, a.XIDsHardware = 3, 2
	tiny := ran("alice", start, start.Add(10*time.Hour), a)
	b := busy(90, 4) // no GPM
	b.UUID = "GPU-b"
	b.XIDs = 1
	other := ran("bob", start, start.Add(10*time.Hour), b)
	other.Account = "physics"
	a2 := a
	a2.XIDs, a2.XIDsHardware = 1, 1
	again := ran("carol", start.Add(20*time.Hour), start.Add(30*time.Hour), a2)
	w := summariseMarch(t, tiny, other, again)

	h := w.Headline.Effective
	near(t, "effective GPU-hours", h.GPUHours, 8)
	near(t, "measured GPU-hours", h.MeasuredGPUHours, 20)
	near(t, "coverage", h.Coverage, 20.0/30)
	if len(w.Models) != 1 {
		t.Fatalf("models = %d", len(w.Models))
	}
	near(t, "model effective", w.Models[0].Effective.GPUHours, 8)
	for _, ac := range w.Accounts {
		switch ac.Name {
		case "lab":
			near(t, "lab effective", ac.Effective.GPUHours, 8)
			near(t, "lab coverage", ac.Effective.Coverage, 1)
		case "physics":
			if ac.Effective.Known() {
				t.Errorf("physics (no GPM) effective is known: %+v", ac.Effective)
			}
		}
	}
	x := w.XIDs
	if x.Hardware != 3 || x.Application != 2 {
		t.Errorf("XIDs hardware %d application %d; want 3, 2", x.Hardware, x.Application)
	}
	want := []GPUXIDs{
		{Node: "gpu01", UUID: "GPU-a", Model: h100, Hardware: 3, Application: 1, HardwareJobs: 2},
		{Node: "gpu01", UUID: "GPU-b", Model: h100, Hardware: 0, Application: 1},
	}
	if !slices.Equal(x.GPUs, want) {
		t.Errorf("GPUs = %+v, want %+v", x.GPUs, want)
	}
}

// TestSharingBySMActivity: a single-GPU job that keeps its GPU nominally
// busy with tiny kernels is a sharing candidate by its SM activity.
func TestSharingBySMActivity(t *testing.T) {
	c := DefaultConfig()
	var jobs []Job
	for i := range 40 {
		g := withSM(busy(90, 4), 0.02)
		j := job(2*time.Hour, g)
		j.ID = strings.Repeat("1", 1+i%3) + string(rune('a'+i%26))
		j.Start, j.End = t0.Add(time.Duration(i)*time.Hour), t0.Add(time.Duration(i+2)*time.Hour)
		j.Submit = j.Start
		jobs = append(jobs, j)
	}
	nodes := []Node{{Name: "gpu01", GPUModel: h100, GPUs: 8, MemoryTotal: card}}
	f, err := Analyse(Input{Jobs: jobs, Nodes: nodes}, c)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range f.Recommendations {
		if r.Kind == RecShards {
			found = true
		}
	}
	if !found {
		t.Errorf("no shard recommendation for tiny-kernel jobs; no change: %v", f.NoChange)
	}
	// By the duty cycle alone (no GPM) the same jobs look busy: no shards.
	for i := range jobs {
		jobs[i].GPUs[0].ActivityValid = false
	}
	if f, err = Analyse(Input{Jobs: jobs, Nodes: nodes}, c); err != nil {
		t.Fatal(err)
	}
	for _, r := range f.Recommendations {
		if r.Kind == RecShards {
			t.Errorf("shards recommended on the duty cycle of busy jobs")
		}
	}
}
