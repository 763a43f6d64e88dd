package analysis

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/slurmext"
)

// The builder converts in batches on several goroutines; the result must
// be the one-by-one conversion, in order.
func TestInputBuilderOrder(t *testing.T) {
	b := NewInputBuilder()
	recs := make([]slurmext.JobRecord, 2*inputBatch+17)
	for i := range recs {
		id := strconv.Itoa(i)
		recs[i] = slurmext.JobRecord{Cluster: "c", JobID: id, User: "u" + id, State: "COMPLETED", ReqGPUs: i % 4}
		b.Add(&recs[i], nil)
	}
	w := Window{From: time.Unix(0, 0), To: time.Unix(3600, 0)}
	in := b.Input(w, time.Unix(1800, 0))
	if len(in.Jobs) != len(recs) || in.Window != w || !in.Now.Equal(time.Unix(1800, 0)) {
		t.Fatalf("%d jobs from %d records, window %v, now %v", len(in.Jobs), len(recs), in.Window, in.Now)
	}
	for i := range recs {
		if want := FromView(&recs[i], nil); !reflect.DeepEqual(in.Jobs[i], want) {
			t.Fatalf("job %d: %+v, want %+v", i, in.Jobs[i], want)
		}
	}
}

// Reserve converts into the final array; a wrong guess, too small or too
// large, still gives every job once, in order.
func TestInputBuilderReserve(t *testing.T) {
	for _, tt := range []struct {
		name       string
		reserve, n int
	}{
		{"exact", 3*inputBatch + 5, 3*inputBatch + 5},
		{"too small", inputBatch + 1, 3*inputBatch + 5},
		{"too large", 5 * inputBatch, inputBatch + 7},
		{"none", 0, inputBatch + 7},
		{"empty", 100, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := NewInputBuilder()
			b.Reserve(tt.reserve)
			recs := make([]slurmext.JobRecord, tt.n)
			for i := range recs {
				recs[i] = slurmext.JobRecord{JobID: strconv.Itoa(i)}
				b.Add(&recs[i], nil)
			}
			in := b.Input(Window{}, time.Time{})
			if len(in.Jobs) != tt.n {
				t.Fatalf("%d jobs, want %d", len(in.Jobs), tt.n)
			}
			for i := range in.Jobs {
				if in.Jobs[i].ID != strconv.Itoa(i) {
					t.Fatalf("job %d is %q", i, in.Jobs[i].ID)
				}
			}
		})
	}
}

// The inventory: nodes seen in profiles (distinct GPUs by UUID), joined by
// slurm.conf's nodes with their shard counts; a node only slurm.conf
// knows joins with its GRES type for a model.
func TestInputBuilderInventory(t *testing.T) {
	b := NewInputBuilder()
	b.SetSlurmNodes([]slurmext.NodeGres{
		{Name: "n1", GPUs: 4, GPUType: "h100", Shards: 8},
		{Name: "n3", GPUs: 2, GPUType: "l40s"},
		{Name: "cpu1"},
	})
	prof := func(node, part string, uuids ...string) profile.Job {
		p := profile.Job{Key: profile.Key{Node: node}, Partition: part}
		for _, u := range uuids {
			p.GPUs = append(p.GPUs, profile.GPU{UUID: u, Model: "NVIDIA H100 80GB HBM3", MemoryTotal: 80 << 30})
		}
		return p
	}
	b.Add(nil, []profile.Job{prof("n1", "gpu", "a", "b")})
	b.Add(nil, []profile.Job{prof("n1", "debug", "b", "c"), prof("n2", "gpu", "x")})
	in := b.Input(Window{}, time.Time{})
	want := []Node{
		{Name: "n1", GPUModel: "NVIDIA H100 80GB HBM3", GPUs: 4, MemoryTotal: 80 << 30, Partitions: []string{"debug", "gpu"}, Shards: 8},
		{Name: "n2", GPUModel: "NVIDIA H100 80GB HBM3", GPUs: 1, MemoryTotal: 80 << 30, Partitions: []string{"gpu"}},
		{Name: "n3", GPUModel: "l40s", GPUs: 2},
	}
	if !reflect.DeepEqual(in.Nodes, want) {
		t.Errorf("nodes = %+v\nwant %+v", in.Nodes, want)
	}
}

// A node's GPUs from profiles are the most in use at once, not every UUID
// it ever reported: a replaced card brings a new UUID (issue #38: a bench
// month's node "held" 18,500 GPUs).
func TestInputBuilderGPUsAtOnce(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	prof := func(node string, from, to int, uuids ...string) profile.Job {
		p := profile.Job{Key: profile.Key{Node: node}, Start: t0.Add(time.Duration(from) * time.Hour), End: t0.Add(time.Duration(to) * time.Hour)}
		for _, u := range uuids {
			p.GPUs = append(p.GPUs, profile.GPU{UUID: u, Model: "NVIDIA A100-SXM4-40GB"})
		}
		return p
	}
	b := NewInputBuilder()
	// r1 has 2 GPUs; the card in slot 1 is replaced twice (a, then c,
	// then e), each new card taking over as the last job on the old one
	// ends.
	b.Add(nil, []profile.Job{prof("r1", 0, 10, "a", "b")})
	b.Add(nil, []profile.Job{prof("r1", 10, 20, "c")})
	b.Add(nil, []profile.Job{prof("r1", 12, 30, "b")})
	b.Add(nil, []profile.Job{prof("r1", 20, 30, "e")})
	// s1: 3 GPUs, one job each at the same time, then one job on all.
	b.Add(nil, []profile.Job{prof("s1", 0, 5, "x"), prof("s1", 1, 5, "y"), prof("s1", 2, 5, "z")})
	b.Add(nil, []profile.Job{prof("s1", 6, 8, "x", "y", "z")})
	// A job still running (no End, a last sample) holds its GPU until then.
	run := prof("t1", 0, 0, "p")
	run.End, run.LastSample = time.Time{}, t0.Add(4*time.Hour)
	b.Add(nil, []profile.Job{run, prof("t1", 3, 6, "q")})
	in := b.Input(Window{}, time.Time{})
	got := map[string]int{}
	for _, n := range in.Nodes {
		got[n.Name] = n.GPUs
	}
	if want := map[string]int{"r1": 2, "s1": 3, "t1": 2}; !reflect.DeepEqual(got, want) {
		t.Errorf("GPUs per node = %v, want %v (UUIDs ever seen: r1 4, s1 3, t1 2)", got, want)
	}
	if w := in.Inventory.Words(); !strings.Contains(w, "7 GPUs") || !strings.Contains(w, ProfilesCount) {
		t.Errorf("inventory %q: want 7 GPUs and how they are counted", w)
	}
}
