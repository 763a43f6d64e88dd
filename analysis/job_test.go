package analysis

import (
	"reflect"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/gpu"
	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/slurmext"
)

// recorded builds a GPU profile the way the agent does: one reading per
// second from t0 (utilisation and memory in GiB), with the job's process
// on the GPU when procs is set.
func recorded(uuid string, utils []uint32, memGiB []uint64, procs bool) profile.GPU {
	g := profile.NewGPU(gpu.Device{UUID: uuid, Name: h100, Minor: 0, MemoryTotal: card}, 0, t0, time.Second, 0)
	for i := range max(len(utils), len(memGiB)) {
		r := profile.Reading{Time: t0.Add(time.Duration(i) * time.Second)}
		if i < len(utils) {
			r.Util = gpu.Some(utils[i])
		}
		if i < len(memGiB) {
			r.MemUsed = gpu.Some(memGiB[i] * gib)
		}
		if procs {
			r.Processes = 1
		}
		g.Observe(r, time.Second)
	}
	return g
}

func nodeProfile(node string, io profile.IOWait, end time.Time, gpus ...profile.GPU) profile.Job {
	p := profile.Job{
		Key:  profile.Key{Cluster: "c1", JobID: "101", Node: node},
		User: "alice", Account: "lab", Partition: "gpu",
		Start: t0, SampleInterval: time.Second,
		Status: profile.StatusRunning, Source: profile.SourceAgent,
		IO:   io,
		GPUs: gpus,
	}
	if !end.IsZero() {
		p.Finish(end)
	}
	return p
}

func TestFromView(t *testing.T) {
	rec := &slurmext.JobRecord{
		Cluster: "c1", JobID: "101", ArrayJobID: "100", ArrayTaskID: 1,
		Name: "train_3", User: "alice", Account: "lab", Partition: "gpu", QOS: "normal",
		State: "COMPLETED", Submit: t0.Add(-time.Hour), Eligible: t0.Add(-30 * time.Minute),
		Start: t0, End: t0.Add(10 * time.Second), TimeLimit: time.Hour,
		ExitStatus: 0, ReqGPUs: 3, ReqGPUType: "h100",
	}
	end := t0.Add(10 * time.Second)
	// Node a: utilisation 0, 50, 100, 50 and memory 2, 8, 8, 8 GiB.
	a := nodeProfile("gpu-a", profile.IOWait{Scope: profile.IOScopeCgroup, StallSeconds: 10, Seconds: 100}, end,
		recorded("GPU-a", []uint32{0, 50, 100, 50}, []uint64{2, 8, 8, 8}, true))
	// Node b: one GPU held and never touched, one without any reading (a
	// hook-only record); IO measured node-wide.
	b := nodeProfile("gpu-b", profile.IOWait{Scope: profile.IOScopeNode, StallSeconds: 30, Seconds: 100}, end,
		recorded("GPU-b", []uint32{0, 0, 0, 0}, []uint64{0, 0, 0, 0}, false),
		recorded("GPU-c", nil, nil, false))

	j := FromView(rec, []profile.Job{a, b})
	wantJob := Job{
		Cluster: "c1", ID: "101", ArrayJobID: "100", User: "alice", Account: "lab", Partition: "gpu",
		QOS: "normal", Name: "train_3", State: "COMPLETED",
		Submit: rec.Submit, Eligible: rec.Eligible, Start: rec.Start, End: rec.End,
		TimeLimit: time.Hour, ExitKnown: true, ReqGPUs: 3, ReqGPUType: "h100",
		HasGPUData: true,
		NodeList:   "gpu-a,gpu-b", // the record has none: the profiles' nodes
		// (10 + 30) / (100 + 100), under the less precise scope.
		IOWait: 0.2, IOWaitValid: true, IOScope: profile.IOScopeNode,
	}
	gotGPUs := j.GPUs
	j.GPUs = nil
	if !reflect.DeepEqual(j, wantJob) {
		t.Errorf("job:\n got %+v\nwant %+v", j, wantJob)
	}
	wantGPUs := []GPU{
		{
			Node: "gpu-a", UUID: "GPU-a", Model: h100, MemoryTotal: card,
			VRAMPeak: 8 * gib, VRAMPeakValid: true,
			// Series points (one per second) hold 2, 8, 8, 8 GiB: p10 is rank
			// ceil(0.4) = 1 → 2 GiB.
			VRAMFloor: 2 * gib, VRAMFloorValid: true,
			// Mean 200/4; sorted 0, 50, 50, 100: p50 rank 2, p95 rank 4.
			UtilMean: 50, UtilMeanValid: true, UtilP50: 50, UtilP95: 100, UtilPctValid: true,
			UtilMax: 100, UtilMaxValid: true, IdleFraction: 0.25, IdleValid: true,
		},
		{
			Node: "gpu-b", UUID: "GPU-b", Model: h100, MemoryTotal: card,
			VRAMPeak: 0, VRAMPeakValid: true, VRAMFloor: 0, VRAMFloorValid: true,
			UtilMean: 0, UtilMeanValid: true, UtilP50: 0, UtilP95: 0, UtilPctValid: true,
			UtilMax: 0, UtilMaxValid: true, IdleFraction: 1, IdleValid: true,
			IdleAllocation: true,
		},
		{Node: "gpu-b", UUID: "GPU-c", Model: h100, MemoryTotal: card},
	}
	if !reflect.DeepEqual(gotGPUs, wantGPUs) {
		t.Errorf("GPUs:\n got %+v\nwant %+v", gotGPUs, wantGPUs)
	}

	// What FromView builds, the rules read: the idle allocation is the one
	// unused GPU; the GPU without readings is never accused. Mean util
	// (50 + 0) / 2 over the two measured GPUs.
	m := Measure(FromView(rec, []profile.Job{a, b}), DefaultConfig())
	if m.GPUs != 3 || m.MeasuredGPUs != 2 || m.UnusedGPUs != 1 || m.IdleAllocatedGPUs != 1 || m.UtilMean != 25 {
		t.Errorf("metrics: GPUs %d measured %d unused %d idle %d mean %v; want 3 2 1 1 25",
			m.GPUs, m.MeasuredGPUs, m.UnusedGPUs, m.IdleAllocatedGPUs, m.UtilMean)
	}
}

func TestFromViewProfilesOnly(t *testing.T) {
	a := nodeProfile("gpu-a", profile.IOWait{}, t0.Add(time.Hour), recorded("GPU-a", []uint32{50}, []uint64{1}, true))
	a.Start = t0.Add(10 * time.Second)
	a.ExitKnown = true
	b := nodeProfile("gpu-b", profile.IOWait{}, t0.Add(2*time.Hour), recorded("GPU-b", []uint32{50}, []uint64{1}, true))
	b.ExitKnown, b.ExitStatus = true, 1

	j := FromView(nil, []profile.Job{a, b})
	if j.Cluster != "c1" || j.ID != "101" || j.User != "alice" || j.Account != "lab" || j.Partition != "gpu" {
		t.Errorf("identity = %q %q %q %q %q", j.Cluster, j.ID, j.User, j.Account, j.Partition)
	}
	if !j.Start.Equal(t0) || !j.End.Equal(t0.Add(2*time.Hour)) {
		t.Errorf("times = %v – %v, want %v – %v", j.Start, j.End, t0, t0.Add(2*time.Hour))
	}
	if !j.ExitKnown || j.ExitStatus != 1 || j.State != "" || !j.HasGPUData || len(j.GPUs) != 2 {
		t.Errorf("exit %v %d state %q data %v gpus %d; want true 1 \"\" true 2", j.ExitKnown, j.ExitStatus, j.State, j.HasGPUData, len(j.GPUs))
	}
	if j.IOWaitValid {
		t.Error("IO wait valid with no measurement")
	}
	if got := outcomeOf(&j); got != OutcomeFailed {
		t.Errorf("outcome = %s, want failed", got)
	}

	// One node still runs the job: no end, exit unknown.
	c := nodeProfile("gpu-c", profile.IOWait{}, time.Time{}, recorded("GPU-c", []uint32{50}, []uint64{1}, true))
	j = FromView(nil, []profile.Job{a, c})
	if !j.End.IsZero() || j.ExitKnown || j.ExitStatus != 0 {
		t.Errorf("running: end %v exit known %v status %d; want zero, false, 0", j.End, j.ExitKnown, j.ExitStatus)
	}
}

func TestFromViewEdges(t *testing.T) {
	if j := FromView(nil, nil); !reflect.DeepEqual(j, Job{}) {
		t.Errorf("FromView(nil, nil) = %+v, want the zero job", j)
	}
	rec := &slurmext.JobRecord{Cluster: "c1", JobID: "7", ReqGPUs: 2, State: "RUNNING", Start: t0}
	j := FromView(rec, nil)
	if j.HasGPUData || j.GPUs != nil || j.IOWaitValid || j.ExitKnown || j.ReqGPUs != 2 {
		t.Errorf("scheduler only: %+v", j)
	}
	if cls, _ := Classify(j, DefaultConfig()); cls != ClassUnknown {
		t.Errorf("scheduler only: class %s, want unknown", cls)
	}
}

func TestFromViewFloor(t *testing.T) {
	tests := []struct {
		name string
		low  int // readings at 2 GiB, then 8 GiB up to 20 readings
		want uint64
	}{
		// 20 points: p10 is rank 2.
		{name: "two low points", low: 2, want: 2 * gib},
		{name: "one low point", low: 1, want: 8 * gib},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mem := make([]uint64, 20)
			for i := range mem {
				mem[i] = 8
				if i < tt.low {
					mem[i] = 2
				}
			}
			p := nodeProfile("n", profile.IOWait{}, t0.Add(time.Minute), recorded("GPU-a", nil, mem, true))
			j := FromView(nil, []profile.Job{p})
			if g := j.GPUs[0]; !g.VRAMFloorValid || g.VRAMFloor != tt.want {
				t.Errorf("floor = %d (%v), want %d", g.VRAMFloor, g.VRAMFloorValid, tt.want)
			}
		})
	}
	// Without the series (a store read without WithSeries): no floor.
	p := nodeProfile("n", profile.IOWait{}, t0.Add(time.Minute), recorded("GPU-a", nil, []uint64{1, 2}, true))
	p.GPUs[0].Series.Points = nil
	if g := FromView(nil, []profile.Job{p}).GPUs[0]; g.VRAMFloorValid {
		t.Error("floor valid without a series")
	}
}

// Slurm's own GPU readings (sacct TRESUsageInMax/Ave) stand in for a
// profile, marked as Slurm's.
func TestFromViewSlurmReadings(t *testing.T) {
	rec := &slurmext.JobRecord{JobID: "7", State: "COMPLETED", ReqGPUs: 2,
		Start: t0, End: t0.Add(time.Hour),
		SlurmGPUMem: 6 << 30, SlurmGPUMemValid: true, SlurmGPUUtil: 3, SlurmGPUUtilValid: true}
	j := FromView(rec, nil)
	if !j.HasGPUData || len(j.GPUs) != 2 || !j.GPUs[0].FromSlurm || !j.GPUs[1].FromSlurm {
		t.Fatalf("job = %+v", j)
	}
	if g := j.GPUs[0]; !g.VRAMPeakValid || g.VRAMPeak != 6<<30 || !g.UtilMeanValid || g.UtilMean != 3 {
		t.Errorf("first GPU = %+v", g)
	}
	if g := j.GPUs[1]; g.VRAMPeakValid || !g.UtilMeanValid {
		t.Errorf("second GPU = %+v: the memory peak is the job's, on the first", g)
	}
	// 3 % mean utilisation: both GPUs unused, as the hints and the class say.
	if m := Measure(j, DefaultConfig()); m.UnusedGPUs != 2 || m.MeasuredGPUs != 2 {
		t.Errorf("metrics = %d unused of %d measured", m.UnusedGPUs, m.MeasuredGPUs)
	}
	if cls, _ := Classify(j, DefaultConfig()); cls != ClassIdleAllocation {
		t.Errorf("class %s, want idle_allocation", cls)
	}
	// A profile's GPUs win over Slurm's readings; no readings, no records.
	p := profile.Job{Key: profile.Key{Node: "n1"}, GPUs: []profile.GPU{{UUID: "GPU-1"}}}
	if j := FromView(rec, []profile.Job{p}); len(j.GPUs) != 1 || j.GPUs[0].FromSlurm {
		t.Errorf("with a profile: %+v", j.GPUs)
	}
	rec.SlurmGPUMemValid, rec.SlurmGPUUtilValid = false, false
	if j := FromView(rec, nil); j.HasGPUData || len(j.GPUs) != 0 {
		t.Errorf("without readings: %+v", j)
	}
}
