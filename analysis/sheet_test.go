package analysis

import (
	"reflect"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/gpu"
	"github.com/gpuprof/gpuprof/profile"
)

// TestXIDsOf: each code once, in order of first appearance, with its
// class and how often it came; the count stays exact beyond those kept.
func TestXIDsOf(t *testing.T) {
	at := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	xs := []profile.XID{{Code: 31, Time: at}, {Code: 79, Time: at}, {Code: 31, Time: at}, {Code: 999, Time: at}}
	got := XIDsOf(70, xs)
	want := XIDList{Count: 70, Codes: []XIDCode{
		{Code: 31, Class: gpu.XIDApplication, N: 2}, {Code: 79, Class: gpu.XIDHardware, N: 1}, {Code: 999, Class: gpu.XIDUnclassified, N: 1},
	}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("XIDsOf = %+v, want %+v", got, want)
	}
	if got.Kept() != 4 || got.ByClass(gpu.XIDApplication) != 2 || got.ByClass(gpu.XIDHardware) != 1 {
		t.Errorf("kept %d, application %d, hardware %d: want 4, 2, 1", got.Kept(), got.ByClass(gpu.XIDApplication), got.ByClass(gpu.XIDHardware))
	}
	if s := got.Codes[0].String(); s != "31 GPU memory page fault: an illegal address (application) ×2" {
		t.Errorf("code 31 written %q", s)
	}
	if got := XIDsOf(0, nil); got.Count != 0 || got.Codes != nil {
		t.Errorf("no XIDs: %+v", got)
	}
}

// TestExamineView: the fact sheet holds Examine's findings of the job
// FromView builds, and, node by node and GPU by GPU in the profiles'
// order, each GPU's facts as FromView makes them, its GPM metrics, its
// XIDs, the node's notices and the job's caveats, the recorder's text
// cleaned.
func TestExamineView(t *testing.T) {
	start := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	node := func(name string, gpus int, activity bool) profile.Job {
		p := profile.Job{Key: profile.Key{Cluster: "lab", JobID: "42", Node: name}, User: "alice", Start: start, SampleInterval: time.Minute}
		for k := range gpus {
			g := profile.NewGPU(gpu.Device{UUID: name + string(rune('a'+k)), Name: "NVIDIA H100 80GB HBM3", MemoryTotal: 80 << 30}, k, start, time.Minute, 0)
			for i := range 30 {
				r := profile.Reading{Time: start.Add(time.Duration(i) * time.Minute), Util: gpu.Some(uint32(10 * k)), MemUsed: gpu.Some(uint64(k) << 30)}
				if activity {
					r.Activity = gpu.Some(gpu.Activity{Interval: time.Minute, SM: gpu.Some(40.0), Tensor: gpu.Some(20.0)})
					r.ActivityScope = profile.ActivityScopeGPU
				}
				g.Observe(r, time.Minute)
			}
			p.GPUs = append(p.GPUs, g)
		}
		p.Finish(start.Add(30 * time.Minute))
		return p
	}
	a, b := node("gpu01", 2, true), node("gpu\x1b[31m02", 1, false)
	a.GPUs[1].AddXID(79, start)
	a.GPUs[1].AddXID(13, start)
	a.GPUs[1].AddXID(79, start)
	a.Notices = []profile.Notice{{Rule: profile.RuleIdleGPU, Status: profile.NoticeSent, Time: start, Evidence: "idle"}}
	b.Partial, b.PartialReasons = true, []string{"agent \x1b]0;x\arestarted"}
	profiles := []profile.Job{a, b}
	c := DefaultConfig()
	s := ExamineView(nil, profiles, c, nil)

	j := FromView(nil, profiles)
	if !reflect.DeepEqual(s.Job, j) || !reflect.DeepEqual(s.JobFindings, Examine(j, c, nil)) {
		t.Fatalf("the sheet's job and findings differ from FromView and Examine")
	}
	if len(s.Nodes) != 2 || len(s.Nodes[0].GPUs) != 2 || len(s.Nodes[1].GPUs) != 1 {
		t.Fatalf("sheet has %d nodes, want gpu01 with 2 GPUs and gpu02 with 1", len(s.Nodes))
	}
	for n, ns := range s.Nodes {
		if ns.Profile != &profiles[n] || !reflect.DeepEqual(ns.Notices, profiles[n].Notices) {
			t.Errorf("node %d: profile or notices not the view's", n)
		}
		for k, gs := range ns.GPUs {
			g := &profiles[n].GPUs[k]
			ag := fromProfileGPU(profiles[n].Node, g)
			if gs.GPU != g || gs.Facts != ag.Facts() || !reflect.DeepEqual(gs.XIDs, XIDsOf(g.XIDCount, g.XIDs)) {
				t.Errorf("node %d GPU %d: readings, facts or XIDs not the GPU's", n, k)
			}
			if (gs.Activity != nil) != (n == 0) {
				t.Errorf("node %d GPU %d: activity %+v, want it on gpu01 only", n, k, gs.Activity)
			}
		}
	}
	act := s.Nodes[0].GPUs[0].Activity
	if act.SM.String() != "mean 40 %, p95 40 %" || act.DRAM.Known || act.DRAM.String() != "-" {
		t.Errorf("activity SM %q, DRAM %q (known %v): want the SM's mean and p95 and DRAM unknown (-)", act.SM, act.DRAM, act.DRAM.Known)
	}
	if x := s.Nodes[0].GPUs[1].XIDs; x.Count != 3 || len(x.Codes) != 2 || x.Codes[0].Code != 79 || x.Codes[0].N != 2 {
		t.Errorf("XIDs %+v, want 79 twice then 13", x)
	}
	want := []string{"idle allocation: 2 GPUs never touched by a process", "partial data on gpu02: agent restarted"}
	if !reflect.DeepEqual(s.Flags, want) {
		t.Errorf("flags %q, want %q", s.Flags, want)
	}
}
