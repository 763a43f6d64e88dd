package analysis

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/slurmext"
)

// The per-user recommendations (recommend, the report) and the per-job
// hints (the TUI, gpuprof jobs) are written by different rules over the
// same jobs. TestAdviceNeverContradicts generates many random months and
// checks that, for every user and every job, they never advise opposite
// things: fewer GPUs against none, none against a job that used its GPUs,
// a shard against a larger GPU.

// habit is one way a user runs jobs; a month mixes several per user so
// that the per-user rules have runs to rest on and mixed users occur.
type habit struct {
	gpus int
	// use: "all", "some" (random number used, at least one), "none",
	// "quietfull" (every GPU quiet, one GPU's memory full), "shard" (a
	// shard of a shared GPU), "small" (one GPU, small and quiet: a sharing
	// candidate), "full" (memory full, busy), "nodata" (sacct history),
	// "memonly" (memory readings, no utilisation).
	use string
}

var uses = []string{"all", "some", "none", "quietfull", "shard", "small", "full", "nodata", "memonly", "sharedwhole"}

func randomMonth(r *rand.Rand) []Job {
	users := 2 + r.IntN(5)
	var jobs []Job
	id := 0
	for u := range users {
		user := fmt.Sprintf("u%d", u)
		habits := make([]habit, 1+r.IntN(3))
		for i := range habits {
			habits[i] = habit{gpus: []int{1, 2, 3, 4, 8}[r.IntN(5)], use: uses[r.IntN(len(uses))]}
		}
		for range 5 + r.IntN(30) {
			h := habits[r.IntN(len(habits))]
			id++
			jobs = append(jobs, randomRun(r, user, strconv.Itoa(id), h))
		}
	}
	return jobs
}

func randomRun(r *rand.Rand, user, id string, h habit) Job {
	run := time.Duration(1+r.IntN(20*60)) * time.Minute
	start := t0.Add(time.Duration(r.IntN(30*24)) * time.Hour)
	wait := time.Duration(r.IntN(4*60)) * time.Minute
	j := Job{
		Cluster: "c1", ID: id, User: user, Account: "a" + user, Partition: "gpu",
		Name: "task_" + h.use, State: []slurmext.JobState{"COMPLETED", "COMPLETED", "FAILED", "TIMEOUT"}[r.IntN(4)],
		Submit: start.Add(-wait), Start: start, End: start.Add(run),
		TimeLimit: time.Duration(float64(run) * (1 + 10*r.Float64())), ExitKnown: true,
		ReqGPUs: h.gpus, HasGPUData: true,
	}
	nodes := 1
	if h.gpus >= 4 && r.IntN(3) == 0 {
		nodes = 2
	}
	gpu := func(i int, util float64, peakGiB uint64) GPU {
		g := busy(util, peakGiB)
		g.Node = fmt.Sprintf("gpu%02d", 1+i%nodes)
		g.UtilP95 = min(100, util+float64(r.IntN(20)))
		g.UtilMax = g.UtilP95
		return withFloor(g, 0.5+0.5*r.Float64())
	}
	quiet := func() float64 { return r.Float64() * 4.9 }
	busyUtil := func() float64 { return 30 + r.Float64()*70 }
	peak := func() uint64 { return 1 + uint64(r.IntN(70)) }
	switch h.use {
	case "nodata":
		j.HasGPUData = false
		return j
	case "shard":
		j.ReqGPUs, j.ReqShards = 0, 1+r.IntN(4)
		g := gpu(0, []float64{quiet(), busyUtil()}[r.IntN(2)], peak())
		g.Shared = true
		j.GPUs = []GPU{g}
		return j
	case "small":
		j.ReqGPUs = 1
		j.GPUs = []GPU{gpu(0, 5+r.Float64()*20, 1+uint64(r.IntN(10)))}
		return j
	}
	used := h.gpus
	switch h.use {
	case "some":
		used = 1 + r.IntN(h.gpus)
	case "none", "quietfull":
		used = 0
	}
	for i := range h.gpus {
		var g GPU
		switch {
		case h.use == "quietfull" && i == 0:
			g = gpu(i, quiet(), 73+uint64(r.IntN(7)))
		case i >= used && r.IntN(2) == 0:
			g = idleGPU()
			g.Node = fmt.Sprintf("gpu%02d", 1+i%nodes)
		case i >= used:
			g = gpu(i, quiet(), peak())
		case h.use == "full":
			g = gpu(i, busyUtil(), 73+uint64(r.IntN(7)))
		default:
			g = gpu(i, busyUtil(), peak())
		}
		if h.use == "sharedwhole" && i == 0 {
			// A whole GPU that shard jobs used at the same time: its
			// readings are this job's processes', and quiet.
			g = gpu(i, quiet(), peak())
			g.Shared = true
		}
		if h.use == "memonly" {
			g.UtilMeanValid, g.UtilPctValid, g.UtilMaxValid, g.IdleValid, g.IdleAllocation = false, false, false, false, false
		}
		j.GPUs = append(j.GPUs, g)
	}
	return j
}

var (
	userTitle  = regexp.MustCompile(`^User (\S+): asked for (\d+) GPUs?, used (none|\d+)$`)
	noneChange = regexp.MustCompile(`^(\d+) of (\d+) runs used none of their GPUs`)
	shardTitle = regexp.MustCompile(`^User (\S+): use a shard$`)
	countOpt   = regexp.MustCompile(`^--(?:gres=gpu:|gpus=)(?:[A-Za-z0-9_.-]+:)?(\d+)$`)
)

// jobAdvice is what a job's hints say about its GPUs.
type jobAdvice struct {
	none    bool // submit without GPUs
	counts  []int
	shard   bool
	smaller bool
	larger  bool
}

func adviceOf(hs []Hint) jobAdvice {
	var a jobAdvice
	for _, h := range hs {
		switch h.Rule {
		case HintUnusedGPUs:
			if h.Option == "" {
				a.none = true
			} else if m := countOpt.FindStringSubmatch(h.Option); m != nil {
				n, _ := strconv.Atoi(m[1])
				a.counts = append(a.counts, n)
			}
		case HintShard:
			a.shard = true
		case HintSmallerGPU:
			a.smaller = true
		case HintLargerGPU:
			a.larger = true
		}
	}
	return a
}

func TestAdviceNeverContradicts(t *testing.T) {
	c := DefaultConfig()
	r := rand.New(rand.NewPCG(10, 9))
	months := 400
	if testing.Short() {
		months = 50
	}
	fired := map[string]int{} // how often each check had something to check
	// The hints know of smaller cards than the plant's H100s, so that the
	// smaller_gpu hint is checked against the others.
	types := GPUTypes(append(plantNodes(),
		Node{Name: "l401", GPUModel: "NVIDIA L4", GPUs: 4, MemoryTotal: 24 << 30},
		Node{Name: "t401", GPUModel: "Tesla T4", GPUs: 4, MemoryTotal: 15 << 30}))
	for month := range months {
		jobs := randomMonth(r)
		f, err := Analyse(Input{Jobs: jobs, Nodes: plantNodes()}, c)
		if err != nil {
			t.Fatal(err)
		}
		byUser := map[string][]jobAdvice{}
		measured := map[string][]Metrics{}
		for _, j := range jobs {
			a := adviceOf(Hints(j, c, types))
			if a.smaller {
				fired["smaller"]++
			}
			byUser[j.User] = append(byUser[j.User], a)
			measured[j.User] = append(measured[j.User], Measure(j, c))
			where := fmt.Sprintf("month %d, job %s (%s, %d GPUs)", month, j.ID, j.Name, j.ReqGPUs)
			switch {
			case a.none && (len(a.counts) > 0 || a.shard || a.larger):
				t.Errorf("%s: hints say both no GPU and a GPU: %+v", where, a)
			case a.shard && a.larger:
				t.Errorf("%s: hints say both a shard and a larger GPU", where)
			case a.smaller && (a.larger || a.none):
				t.Errorf("%s: hints say both a smaller GPU and a larger one or none: %+v", where, a)
			}
			for _, n := range a.counts {
				if n < 1 || n >= max(j.ReqGPUs, len(j.GPUs)) {
					t.Errorf("%s: hint asks for %d GPUs", where, n)
				}
			}
		}
		for _, rec := range f.Recommendations {
			if m := shardTitle.FindStringSubmatch(rec.Title); m != nil {
				u := m[1]
				fired["shard"]++
				for _, a := range byUser[u] {
					if a.larger {
						t.Errorf("month %d: %s is told to use a shard, and a job of theirs to use a larger GPU", month, u)
					}
				}
			}
			m := userTitle.FindStringSubmatch(rec.Title)
			if m == nil {
				continue
			}
			u, asked := m[1], m[2]
			hints := byUser[u]
			if m[3] == "none" {
				// Every run the advice counts got "submit without GPUs" on
				// its own, and none of them used a GPU.
				fired["none"]++
				cm := noneChange.FindStringSubmatch(rec.Change)
				if cm == nil {
					t.Fatalf("month %d: %q: change %q does not say how many runs", month, rec.Title, rec.Change)
				}
				n, _ := strconv.Atoi(cm[1])
				nonHints := 0
				for _, a := range hints {
					if a.none {
						nonHints++
					}
				}
				if nonHints < n {
					t.Errorf("month %d: %s: %q rests on %d runs, but only %d jobs got the no-GPU hint", month, u, rec.Change, n, nonHints)
				}
				if len(rec.Config) != 0 {
					t.Errorf("month %d: %s: no-GPU advice with a GPU line %v", month, u, rec.Config)
				}
				continue
			}
			// Fewer GPUs: some job of the user was told the same count on
			// its own; heidi's "used 1" where every job used none fails
			// here.
			k, _ := strconv.Atoi(m[3])
			fired["fewer"]++
			same, allNone := false, true
			for i, a := range hints {
				for _, n := range a.counts {
					same = same || n == k
				}
				if !a.none && measured[u][i].UtilMeanValid {
					allNone = false
				}
			}
			if !same {
				t.Errorf("month %d: %s: %q, but no job's hint asks for %d GPUs (hints %+v)", month, u, rec.Title, k, hints)
			}
			if allNone {
				t.Errorf("month %d: %s: %q, but every measured job was told to run without GPUs", month, u, rec.Title)
			}
			if a, _ := strconv.Atoi(asked); k < 1 || k >= a {
				t.Errorf("month %d: %s: %q is not fewer GPUs", month, u, rec.Title)
			}
		}
		if t.Failed() {
			t.Fatalf("month %d failed; its users: %s", month, strings.Join(sortedKeys(byUser), ", "))
		}
	}
	// The generator must reach every kind of advice, or the test checks
	// nothing (with -short its fewer months need not reach each; make
	// test runs it whole).
	for _, k := range []string{"none", "fewer", "shard", "smaller"} {
		if fired[k] == 0 && !testing.Short() {
			t.Errorf("no month produced %s advice: the generator no longer reaches it", k)
		}
	}
	t.Logf("advice checked: %v", fired)
}
