package analysis

import (
	"math/rand"
	"testing"
	"time"
)

// countingMonth is March 2025 on two 4-GPU nodes: n1 with 8 shards (2 per
// GPU) in slurm.conf, n2 without a shard count. Its GPU-hours, computed
// by hand:
//
//	a  2 GPUs, 10 h inside March                           20
//	b  1 GPU from Feb 28 20:00 to Mar 1 04:00 (4 h inside)   4
//	c  4 GPUs RUNNING since Mar 31 12:00 (12 h to Apr 1)    48
//	d  1 shard of n1 = 0.5 GPU for 8 h                       4
//	e  2 shards on n2 = 2/8 GPU (assumed) for 8 h            2
//	f  1 GPU, sacct record with no end, RUNNING since Mar 30 48
//	g  1 GPU, all of it in February                          0
//	h  a CPU job                                             0
//	                                                       ---
//	                                                       126
func countingMonth() (Input, float64) {
	onNode := func(g GPU, node string) GPU { g.Node = node; return g }
	mk := func(id, user string, start, end time.Time, gpus ...GPU) Job {
		j := ran(user, start, end, gpus...)
		j.ID = id
		return j
	}
	a := mk("a", "alice", utc(3, 10, 0, 0), utc(3, 10, 10, 0), onNode(busy(80, 20), "n1"), onNode(busy(80, 20), "n1"))
	b := mk("b", "bob", utc(2, 28, 20, 0), utc(3, 1, 4, 0), onNode(busy(50, 10), "n2"))
	c := mk("c", "carol", utc(3, 31, 12, 0), time.Time{}, onNode(busy(90, 70), "n2"), onNode(busy(90, 70), "n2"),
		onNode(busy(90, 70), "n2"), onNode(busy(90, 70), "n2"))
	c.State, c.ExitKnown = "RUNNING", false
	d := mk("d", "dave", utc(3, 12, 0, 0), utc(3, 12, 8, 0), onNode(busy(30, 5), "n1"))
	d.ReqGPUs, d.ReqShards = 0, 1
	e := mk("e", "erin", utc(3, 13, 0, 0), utc(3, 13, 8, 0), onNode(busy(30, 5), "n2"))
	e.ReqGPUs, e.ReqShards = 0, 2
	f := mk("f", "frank", utc(3, 30, 0, 0), time.Time{})
	f.State, f.ReqGPUs, f.HasGPUData, f.ExitKnown = "RUNNING", 1, false, false
	g := mk("g", "gina", utc(2, 10, 0, 0), utc(2, 11, 0, 0), onNode(busy(50, 10), "n1"))
	h := mk("h", "hank", utc(3, 5, 0, 0), utc(3, 5, 2, 0))
	h.ReqGPUs, h.HasGPUData = 0, false
	in := Input{
		Jobs:   []Job{a, b, c, d, e, f, g, h},
		Nodes:  []Node{{Name: "n1", GPUModel: h100, GPUs: 4, Shards: 8}, {Name: "n2", GPUModel: h100, GPUs: 4}},
		Window: march,
		Now:    utc(4, 5, 0, 0),
	}
	return in, 126
}

// Every table's GPU-hours add up to the headline's, on one rule.
func TestCountingAddsUp(t *testing.T) {
	in, want := countingMonth()
	c := DefaultConfig()
	f, err := Analyse(in, c)
	if err != nil {
		t.Fatal(err)
	}
	w := SummariseWorkload(in, WorkloadParams{Window: march}, c)
	near(t, "summary GPU-hours", f.Summary.GPUHours, want)
	near(t, "headline allocated", w.Headline.AllocatedGPUHours, want)
	sum := func(vs ...float64) float64 {
		s := 0.0
		for _, v := range vs {
			s += v
		}
		return s
	}
	var cls, parts, prof, models, users, daily, hw []float64
	for _, x := range f.Summary.ByClass {
		cls = append(cls, x.GPUHours)
	}
	for _, x := range f.Summary.Partitions {
		parts = append(parts, x.GPUHours)
	}
	for _, x := range f.Profiles {
		prof = append(prof, x.GPUHours)
	}
	for _, x := range w.Models {
		models = append(models, x.GPUHours)
	}
	for _, x := range w.Users {
		users = append(users, x.GPUHours)
	}
	users = append(users, w.OtherUsers.GPUHours)
	for _, x := range w.Daily {
		daily = append(daily, x.Allocated)
	}
	occ := [7][24]float64{}
	for d := range 31 {
		day := march.From.AddDate(0, 0, d)
		for hr := range 24 {
			occ[(int(day.Weekday())+6)%7][hr]++
		}
	}
	for d := range 7 {
		for hr := range 24 {
			hw = append(hw, w.HourOfWeek[d][hr]*occ[d][hr])
		}
	}
	for name, v := range map[string][]float64{"classes": cls, "partitions": parts, "task profiles": prof,
		"models": models, "users": users, "days": daily, "hours of the week": hw} {
		near(t, name, sum(v...), want)
	}
	// The plan: the window's hours, C_now = GPU-hours / hours, and a peak
	// within the 8 GPUs there are (c's 4 GPUs and f's 1 at once, plus
	// nothing else on Mar 31).
	p := f.Plan
	near(t, "plan period", p.PeriodHours, 744)
	near(t, "C_now", p.CNow, want/744)
	if p.PeakGPUs > 8 || p.PeakGPUs != 5 {
		t.Errorf("peak %v GPUs at once, want 5 (never over the 8 there are)", p.PeakGPUs)
	}
	k := f.Counting
	if k.OpenJobs != 2 || !approx(k.OpenGPUHours, 96) || !k.End.Equal(march.To) {
		t.Errorf("counting = %+v, want 2 open jobs, 96 GPU-hours, up to Apr 1", k)
	}
	if k.ShardJobs != 2 || k.AssumedShardJobs != 1 || k.ShardsAssumed != DefaultShardsPerGPU {
		t.Errorf("counting = %+v, want 2 shard jobs, 1 on the assumption", k)
	}
	// Jobs still running are the long runs they already are: c with its
	// readings, f from the scheduler record alone.
	for _, i := range []int{2, 5} {
		if cls := f.Jobs[i].Class; cls != ClassLongTraining {
			t.Errorf("running job %s: class %s, want long_training", in.Jobs[i].ID, cls)
		}
	}
	if w.Counting != k {
		t.Errorf("workload counted %+v, analysis %+v", w.Counting, k)
	}
}

// Mid-month, jobs without an end count up to now, not to the month's end.
func TestCountingUpToNow(t *testing.T) {
	in, _ := countingMonth()
	in.Now = utc(3, 31, 18, 0) // 6 h of c, 42 h of f
	f, err := Analyse(in, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	near(t, "GPU-hours", f.Summary.GPUHours, 20+4+24+4+2+42)
	near(t, "plan period", f.Plan.PeriodHours, 744-6)
	if w := SummariseWorkload(in, WorkloadParams{Window: march}, DefaultConfig()); !w.DataEnd.Equal(in.Now) {
		t.Errorf("data end %v, want now %v", w.DataEnd, in.Now)
	}
}

// Random months on a known inventory: whatever the jobs, the tables add up,
// the plan's C_now is GPU-hours over the window and no more GPUs are held
// at once than the jobs were placed on.
func TestCountingRandomMonths(t *testing.T) {
	for seed := range int64(40) {
		r := rand.New(rand.NewSource(seed))
		in := randomPlacedMonth(r)
		c := DefaultConfig()
		f, err := Analyse(in, c)
		if err != nil {
			t.Fatal(err)
		}
		w := SummariseWorkload(in, WorkloadParams{Window: march}, c)
		if !approx(f.Summary.GPUHours, w.Headline.AllocatedGPUHours) {
			t.Fatalf("seed %d: summary %v, headline %v", seed, f.Summary.GPUHours, w.Headline.AllocatedGPUHours)
		}
		cls, models := 0.0, 0.0
		for _, x := range f.Summary.ByClass {
			cls += x.GPUHours
		}
		for _, x := range w.Models {
			models += x.GPUHours
		}
		if !approx(cls, f.Summary.GPUHours) || !approx(models, f.Summary.GPUHours) {
			t.Fatalf("seed %d: classes %v, models %v, total %v", seed, cls, models, f.Summary.GPUHours)
		}
		if !approx(f.Plan.CNow, f.Summary.GPUHours/march.Hours()) {
			t.Fatalf("seed %d: C_now %v, want %v", seed, f.Plan.CNow, f.Summary.GPUHours/march.Hours())
		}
		if f.Plan.PeakGPUs > float64(TotalGPUs(in.Nodes))+1e-9 {
			t.Fatalf("seed %d: %v GPUs held at once on %d", seed, f.Plan.PeakGPUs, TotalGPUs(in.Nodes))
		}
	}
}

// randomPlacedMonth places random jobs on two 4-GPU nodes (2 shards per
// GPU) as a scheduler would: a job starts only when its GPUs or shards are
// free, so the true concurrency never exceeds the inventory. Some run past
// the month's end without an end time; some started in February.
func randomPlacedMonth(r *rand.Rand) Input {
	type slot struct{ freeAt time.Time }
	const nodes, gpusPer, shardsPer = 2, 4, 2
	var gpus [nodes * gpusPer][shardsPer]slot
	from := march.From.Add(-48 * time.Hour)
	var jobs []Job
	for i := range 300 {
		start := from.Add(time.Duration(r.Int63n(int64(33 * 24 * time.Hour))))
		run := time.Duration(1+r.Int63n(40*3600)) * time.Second
		whole := r.Intn(3) != 0
		need := 1 + r.Intn(4)
		node := r.Intn(nodes)
		// Find the earliest time the job's GPUs (or one GPU's shards) are
		// free on its node, and start it then.
		var pick []int
		at := start
		if whole {
			for g := node * gpusPer; g < (node+1)*gpusPer; g++ {
				pick = append(pick, g)
			}
			// The need earliest-free GPUs.
			for a := 0; a < len(pick); a++ {
				for b := a + 1; b < len(pick); b++ {
					if gpus[pick[b]][0].freeAt.Before(gpus[pick[a]][0].freeAt) {
						pick[a], pick[b] = pick[b], pick[a]
					}
				}
			}
			pick = pick[:need]
			for _, g := range pick {
				for s := range shardsPer {
					if gpus[g][s].freeAt.After(at) {
						at = gpus[g][s].freeAt
					}
				}
			}
		} else {
			g := node*gpusPer + r.Intn(gpusPer)
			pick = []int{g}
			need = 1 + r.Intn(shardsPer)
			for s := range need {
				if gpus[g][s].freeAt.After(at) {
					at = gpus[g][s].freeAt
				}
			}
		}
		end := at.Add(run)
		var gs []GPU
		for _, g := range pick {
			gg := busy(float64(r.Intn(100)), uint64(1+r.Intn(79)))
			gg.Node = []string{"n1", "n2"}[g/gpusPer]
			gs = append(gs, gg)
			if whole {
				for s := range shardsPer {
					gpus[g][s].freeAt = end
				}
			} else {
				for s := range need {
					gpus[g][s].freeAt = end
				}
			}
		}
		j := ran("u"+string(rune('a'+r.Intn(6))), at, end, gs...)
		j.ID = string(rune('A' + i%26))
		j.Submit = start
		if whole {
			j.ReqGPUs = need
		} else {
			j.ReqGPUs, j.ReqShards = 0, need
		}
		if end.After(march.To) && r.Intn(2) == 0 {
			j.End, j.State, j.ExitKnown = time.Time{}, "RUNNING", false
		}
		if r.Intn(5) == 0 {
			j.GPUs, j.HasGPUData = nil, false // sacct history
		}
		jobs = append(jobs, j)
	}
	return Input{
		Jobs:   jobs,
		Nodes:  []Node{{Name: "n1", GPUs: gpusPer, Shards: gpusPer * shardsPer}, {Name: "n2", GPUs: gpusPer, Shards: gpusPer * shardsPer}},
		Window: march,
		Now:    march.To.Add(72 * time.Hour),
	}
}

// A shard job without a profile takes its GPU's shard count when every
// node with shards has the same per GPU; otherwise it is assumed.
func TestCountingShardsWithoutProfile(t *testing.T) {
	shardJob := func() Job {
		j := ran("u", utc(3, 2, 0, 0), utc(3, 2, 4, 0))
		j.ReqGPUs, j.ReqShards, j.HasGPUData = 0, 2, false
		return j
	}
	for _, tt := range []struct {
		name    string
		nodes   []Node
		share   float64
		assumed int
	}{
		{"all 4 per GPU", []Node{{Name: "a", GPUs: 2, Shards: 8}, {Name: "b", GPUs: 4, Shards: 16}, {Name: "c", GPUs: 4}}, 0.5, 0},
		{"nodes differ", []Node{{Name: "a", GPUs: 2, Shards: 8}, {Name: "b", GPUs: 4, Shards: 8}}, 2.0 / DefaultShardsPerGPU, 1},
		{"no shards known", []Node{{Name: "c", GPUs: 4}}, 2.0 / DefaultShardsPerGPU, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Analyse(Input{Jobs: []Job{shardJob()}, Nodes: tt.nodes, Window: march}, DefaultConfig())
			if err != nil {
				t.Fatal(err)
			}
			near(t, "GPU-hours", f.Summary.GPUHours, 4*tt.share)
			if f.Counting.AssumedShardJobs != tt.assumed {
				t.Errorf("assumed for %d jobs, want %d", f.Counting.AssumedShardJobs, tt.assumed)
			}
		})
	}
}
