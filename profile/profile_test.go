package profile

import (
	"reflect"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/gpu"
)

func TestIOWait(t *testing.T) {
	type obs struct {
		scope       string
		stall, wall float64
	}
	tests := []struct {
		name         string
		obs          []obs
		wantScope    string
		wantStall    float64
		wantSeconds  float64
		wantFraction float64
		wantOK       bool
	}{
		{name: "not measured", wantScope: IOScopeNone, wantOK: false},
		{
			name:      "cgroup",
			obs:       []obs{{IOScopeCgroup, 1, 10}, {IOScopeCgroup, 2, 10}},
			wantScope: IOScopeCgroup, wantStall: 3, wantSeconds: 20, wantFraction: 0.15, wantOK: true,
		},
		{
			name:      "downgrade keeps the less precise scope",
			obs:       []obs{{IOScopeCgroup, 1, 10}, {IOScopeNode, 5, 10}, {IOScopeCgroup, 0, 10}},
			wantScope: IOScopeNode, wantStall: 6, wantSeconds: 30, wantFraction: 0.2, wantOK: true,
		},
		{
			name:      "process after cgroup",
			obs:       []obs{{IOScopeProcess, 2, 10}, {IOScopeCgroup, 2, 10}},
			wantScope: IOScopeProcess, wantStall: 4, wantSeconds: 20, wantFraction: 0.2, wantOK: true,
		},
		{
			name:      "stall above wall clamps",
			obs:       []obs{{IOScopeNode, 15, 10}},
			wantScope: IOScopeNode, wantStall: 10, wantSeconds: 10, wantFraction: 1, wantOK: true,
		},
		{
			name:      "negative stall ignored",
			obs:       []obs{{IOScopeCgroup, 4, 10}, {IOScopeNode, -1, 10}},
			wantScope: IOScopeCgroup, wantStall: 4, wantSeconds: 10, wantFraction: 0.4, wantOK: true,
		},
		{
			name:      "no wall time ignored",
			obs:       []obs{{IOScopeNode, 1, 0}, {IOScopeNode, 1, -3}},
			wantScope: IOScopeNone, wantOK: false,
		},
		{
			name:      "no scope ignored",
			obs:       []obs{{IOScopeNone, 1, 10}},
			wantScope: IOScopeNone, wantOK: false,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var w IOWait
			for _, o := range tt.obs {
				w.Observe(o.scope, o.stall, o.wall)
			}
			if w.Scope != tt.wantScope || w.StallSeconds != tt.wantStall || w.Seconds != tt.wantSeconds {
				t.Errorf("IOWait = %+v, want scope %q stall %v seconds %v", w, tt.wantScope, tt.wantStall, tt.wantSeconds)
			}
			f, ok := w.Fraction()
			if ok != tt.wantOK || !approx(f, tt.wantFraction) {
				t.Errorf("Fraction() = %v, %v; want %v, %v", f, ok, tt.wantFraction, tt.wantOK)
			}
		})
	}
}

func TestIOWaitFractionClamps(t *testing.T) {
	// A profile decoded from elsewhere may hold values Observe never makes.
	tests := []struct {
		name string
		w    IOWait
		want float64
	}{
		{name: "above one", w: IOWait{Scope: IOScopeNode, StallSeconds: 20, Seconds: 10}, want: 1},
		{name: "negative", w: IOWait{Scope: IOScopeNode, StallSeconds: -2, Seconds: 10}, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, ok := tt.w.Fraction(); !ok || got != tt.want {
				t.Errorf("Fraction() = %v, %v; want %v, true", got, ok, tt.want)
			}
		})
	}
}

func TestMarkPartial(t *testing.T) {
	var j Job
	for _, r := range []string{"agent restarted", "GPU lost", "agent restarted"} {
		j.MarkPartial(r)
	}
	if want := []string{"agent restarted", "GPU lost"}; !j.Partial || !reflect.DeepEqual(j.PartialReasons, want) {
		t.Errorf("Partial %v, reasons %q; want true, %q", j.Partial, j.PartialReasons, want)
	}
}

func TestFinish(t *testing.T) {
	tests := []struct {
		name    string
		end     time.Time
		wantEnd time.Time
	}{
		{name: "end after start", end: t0.Add(time.Hour), wantEnd: t0.Add(time.Hour)},
		{name: "end before start clamps", end: t0.Add(-time.Hour), wantEnd: t0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := Job{Start: t0, Status: StatusRunning}
			j.Finish(tt.end)
			if !j.End.Equal(tt.wantEnd) || j.Status != StatusFinished {
				t.Errorf("End %v, Status %q; want %v, %q", j.End, j.Status, tt.wantEnd, StatusFinished)
			}
			if j.Partial {
				t.Errorf("job without GPUs marked partial: %q", j.PartialReasons)
			}
		})
	}
}

func TestFinishTwiceKeepsOneReason(t *testing.T) {
	// The agent and a late epilog may both finish a short job.
	j := Job{Start: t0, SampleInterval: interval, GPUs: []GPU{newTestGPU(0)}}
	j.Finish(at(1))
	j.Finish(at(1))
	if len(j.PartialReasons) != 1 {
		t.Errorf("PartialReasons = %q, want one reason", j.PartialReasons)
	}
}

func TestJobGPU(t *testing.T) {
	j := Job{GPUs: []GPU{{UUID: "GPU-a"}, {UUID: "GPU-b"}}}
	g := j.GPU("GPU-b")
	if g == nil {
		t.Fatal("GPU(GPU-b) = nil")
	}
	g.MemPeak = 7 // the pointer is into the job, so the agent can update it
	if j.GPUs[1].MemPeak != 7 {
		t.Errorf("update through GPU() not visible in the job")
	}
	if g := j.GPU("GPU-z"); g != nil {
		t.Errorf("GPU(GPU-z) = %+v, want nil", g)
	}
}

// richJob is a job with something in every slice Clone must copy.
func richJob() Job {
	g := newTestGPU(0)
	for i := range 5 {
		g.Observe(Reading{Time: at(i), Util: gpu.Some(uint32(10 * i)), MemUsed: gpu.Some(uint64(i) * gib), Processes: 1,
			Activity: gpu.Some(gpu.Activity{Interval: interval, SM: gpu.Some(float64(i)), FP32: gpu.Some(1.5)})}, interval)
	}
	g.AddXID(79, at(2))
	g.AddProcessName("python")
	j := Job{
		Key:            Key{Cluster: "c", JobID: "42", Node: "n1"},
		Start:          t0,
		Status:         StatusRunning,
		SampleInterval: interval,
		IO:             IOWait{Scope: IOScopeCgroup, StallSeconds: 1, Seconds: 5},
		GPUs:           []GPU{g},
	}
	j.MarkPartial("agent restarted")
	return j
}

func TestCloneIsDeep(t *testing.T) {
	orig, want := richJob(), richJob()
	c := orig.Clone()
	if !reflect.DeepEqual(c, orig) {
		t.Fatalf("clone differs from the original:\n got %+v\nwant %+v", c, orig)
	}
	c.PartialReasons[0] = "changed"
	c.MarkPartial("another")
	cg := &c.GPUs[0]
	cg.UtilHist[20]++
	cg.XIDs[0].Code = 13
	cg.Processes[0] = "changed"
	cg.Series.Points[0].N = 99
	cg.Activity.SM.Hist[3]++
	cg.Activity.FP32.Sum = 0
	cg.MemPeak = 1
	cg.Observe(Reading{Time: at(5), Util: gpu.Some[uint32](100)}, interval)
	c.GPUs = append(c.GPUs, GPU{UUID: "GPU-new"})
	c.Finish(at(10))
	if !reflect.DeepEqual(orig, want) {
		t.Errorf("mutating the clone changed the original:\n got %+v\nwant %+v", orig, want)
	}
}
