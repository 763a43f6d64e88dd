package queuesim

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/golden_replays.json from this code (only for a deliberate change of the model, its reason and differences in the commit: a speed change must leave the file as it is)")

// goldenShape is one kind of workload of the golden replays.
type goldenShape struct {
	name        string
	nodes       int
	gpus        int // per node
	shards      int // per GPU, 0 none
	parts       int // partitions, node ranges overlapping
	multifactor bool
	qos         bool
	multiNode   bool
	cancels     bool
	running     bool
	load        float64 // offered GPU load over the cluster's GPUs
	jobs        int
}

// goldenShapes cover what the scheduler models: typed and untyped
// requests, partitions with tiers and MaxTime, shards, jobs on several
// nodes, QOS limits, cancels while pending, jobs running at the start,
// priority/multifactor with fair-share and age; at loads from quiet to
// past saturation (where the backfill's horizon grows).
var goldenShapes = []goldenShape{
	{name: "fifo-quiet", nodes: 4, gpus: 8, parts: 1, load: 0.4, jobs: 2000},
	{name: "basic-busy", nodes: 6, gpus: 8, parts: 2, load: 0.85, jobs: 3000},
	{name: "basic-saturated", nodes: 3, gpus: 8, parts: 1, load: 1.2, jobs: 2500},
	{name: "multifactor", nodes: 6, gpus: 4, parts: 2, multifactor: true, load: 0.9, jobs: 2500},
	{name: "multifactor-qos-cancel", nodes: 5, gpus: 8, parts: 3, multifactor: true, qos: true, cancels: true, load: 0.95, jobs: 3000},
	{name: "shards", nodes: 4, gpus: 4, shards: 4, parts: 2, load: 0.8, jobs: 2500},
	{name: "multinode", nodes: 8, gpus: 4, parts: 2, multiNode: true, load: 0.8, jobs: 2000},
	{name: "everything", nodes: 8, gpus: 8, shards: 2, parts: 3, multifactor: true, qos: true, multiNode: true, cancels: true, running: true, load: 1.0, jobs: 4000},
}

// goldenWorkload builds the shape's cluster, settings and jobs from a
// fixed seed.
func goldenWorkload(sh goldenShape) (Cluster, Priority, Scheduler, []Job) {
	rng := rand.New(rand.NewPCG(27, uint64(len(sh.name))*1000+uint64(sh.jobs)))
	var c Cluster
	types := []string{"a100", "h100"}
	for i := range sh.nodes {
		c.Nodes = append(c.Nodes, Node{Name: fmt.Sprint("n", i), Type: types[i%2], GPUs: sh.gpus, ShardsPerGPU: sh.shards * (i % 2)})
	}
	for p := range sh.parts {
		part := Partition{Name: fmt.Sprint("p", p), PriorityTier: p % 2, PriorityFactor: 1 + p}
		lo := p * sh.nodes / (sh.parts + 1)
		for n := lo; n < sh.nodes; n++ {
			part.Nodes = append(part.Nodes, n)
		}
		if p == 2 {
			part.MaxTime = 4 * time.Hour
		}
		c.Partitions = append(c.Partitions, part)
	}
	if sh.qos {
		c.QOS = []QOS{{Name: "normal"}, {Name: "high", Priority: 100, MaxGPUsPerUser: 8, MaxJobsPerUser: 3}, {Name: "grp", GrpGPUs: 12}}
	}
	pr := DefaultPriority()
	if sh.multifactor {
		pr.Multifactor = true
		pr.WeightAge, pr.WeightFairshare, pr.WeightJobSize, pr.WeightPartition, pr.WeightQOS = 1000, 10000, 500, 1000, 2000
		pr.MaxAge = 2 * 24 * time.Hour
		pr.DecayHalfLife = 3 * 24 * time.Hour
	}
	sc := DefaultScheduler()
	const month = 30 * 86400.0
	total := float64(sh.nodes * sh.gpus)
	meanGPUs := 2.0
	meanRun := sh.load * total * month / (float64(sh.jobs) * meanGPUs)
	jobs := make([]Job, sh.jobs)
	for i := range jobs {
		run := math.Exp(rng.NormFloat64()*1.1) * meanRun / math.Exp(1.1*1.1/2)
		run = max(run, 30)
		j := Job{
			Arrival: time.Duration(rng.Float64()*month) * time.Second,
			Order:   int64(i), Run: time.Duration(run) * time.Second,
			Limit: time.Duration(run*(1.2+2*rng.Float64())+120) * time.Second,
			QOS:   -1, User: rng.IntN(12), Account: rng.IntN(3), Nodes: 1, GPUs: 1 + rng.IntN(3),
			Partitions: []int{rng.IntN(sh.parts)},
		}
		if rng.IntN(5) == 0 {
			j.Partitions = append(j.Partitions, (j.Partitions[0]+1)%sh.parts)
			if j.Partitions[1] == j.Partitions[0] {
				j.Partitions = j.Partitions[:1]
			}
		}
		if rng.IntN(4) == 0 {
			j.Type = types[rng.IntN(2)]
		}
		if rng.IntN(8) == 0 {
			j.GPUs = 4 + rng.IntN(sh.gpus-3)
		}
		if sh.shards > 0 && rng.IntN(4) == 0 {
			j.GPUs, j.Shards, j.Type = 0, 1+rng.IntN(sh.shards), types[1]
		}
		if sh.multiNode && rng.IntN(10) == 0 {
			j.Nodes = 2 + rng.IntN(2)
		}
		if sh.qos {
			j.QOS = rng.IntN(3)
		}
		if rng.IntN(15) == 0 {
			j.Limit = 0
		}
		if sh.cancels && rng.IntN(12) == 0 {
			j.Cancels, j.Cancel = true, j.Arrival+time.Duration(rng.IntN(4*3600))*time.Second
		}
		jobs[i] = j
	}
	if sh.running {
		for i := range sh.nodes * 2 {
			started := -time.Duration(rng.IntN(3*3600)) * time.Second
			jobs = append(jobs, Job{Running: true, Started: started, Arrival: started, Order: int64(-1 - i),
				Run: time.Duration(1800+rng.IntN(4*3600)) * time.Second, Limit: 6 * time.Hour,
				Partitions: []int{0}, QOS: -1, User: i % 5, Nodes: 1, GPUs: 1 + rng.IntN(2), Pinned: []int{i % sh.nodes}})
		}
	}
	return c, pr, sc, jobs
}

// goldenDigest is a replay's answer in a few bytes: a hash over every
// job's outcome, start, end, partition, first node and whether the
// backfill started it, and the simulator's counts.
type goldenDigest struct {
	Hash  string `json:"hash"`
	Stats Stats  `json:"stats"`
	Ran   int    `json:"ran"`
}

func digestOf(r *Result) goldenDigest {
	h := sha256.New()
	var b [8]byte
	put := func(v int64) {
		binary.LittleEndian.PutUint64(b[:], uint64(v))
		h.Write(b[:])
	}
	d := goldenDigest{Stats: r.Stats}
	for _, j := range r.Jobs {
		put(int64(j.Outcome))
		put(int64(j.Start))
		put(int64(j.End))
		put(int64(j.Partition))
		put(int64(j.Node))
		if j.Backfilled {
			put(1)
		} else {
			put(0)
		}
		if j.Outcome == Ran {
			d.Ran++
		}
	}
	d.Hash = fmt.Sprintf("%x", h.Sum(nil))
	return d
}

// TestGoldenReplays: every golden workload, with three seeds, replays to
// exactly the answer on file (testdata/golden_replays.json): made from
// commit 35df12b before issue #27's speed work, which left it unchanged,
// and made again only at deliberate changes of the model (a5e234f: the
// threads' grids, the wall-clock backfill, Fair Tree), each commit saying
// why. A faster backfill or main scheduler may skip work, never change a
// start.
func TestGoldenReplays(t *testing.T) {
	path := filepath.Join("testdata", "golden_replays.json")
	got := map[string]goldenDigest{}
	for _, sh := range goldenShapes {
		c, pr, sc, jobs := goldenWorkload(sh)
		for _, seed := range []uint64{0, 1, 2} {
			r, err := Run(c, pr, sc, jobs, Options{Seed: seed})
			if err != nil {
				t.Fatalf("%s: %v", sh.name, err)
			}
			got[fmt.Sprintf("%s/seed=%d", sh.name, seed)] = digestOf(r)
		}
	}
	if *updateGolden {
		b, _ := json.MarshalIndent(got, "", "  ")
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]goldenDigest
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	if len(want) != len(got) {
		t.Errorf("%d golden replays on file, %d made", len(want), len(got))
	}
	for k, w := range want {
		g, ok := got[k]
		switch {
		case !ok:
			t.Errorf("%s: not replayed", k)
		case g.Hash != w.Hash || g.Ran != w.Ran:
			t.Errorf("%s: answer differs from the golden one (ran %d, golden %d; stats %+v, golden %+v)", k, g.Ran, w.Ran, g.Stats, w.Stats)
		case g.Stats.Events != w.Stats.Events || g.Stats.BackfillTested != w.Stats.BackfillTested:
			// The plan's scheduler steps (and plan.step_budget) count
			// these two: a faster backfill still tests the same jobs.
			t.Errorf("%s: same answer, other steps: %+v, golden %+v", k, g.Stats, w.Stats)
		}
	}
}
