package analysis

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/profile"
)

func TestHints(t *testing.T) {
	c := DefaultConfig()
	h := time.Hour
	type want struct {
		rule, option string
		why          []string // substrings of Why
	}
	// A cluster of H100s with smaller cards beside them: an L4 (24 GiB),
	// an A100 (40 GiB) and a T4 (15 GiB).
	cluster := GPUTypes([]Node{
		{Name: "gpu01", GPUModel: h100, GPUs: 4, MemoryTotal: card},
		{Name: "l401", GPUModel: "NVIDIA L4", GPUs: 4, MemoryTotal: 24 * gib},
		{Name: "a101", GPUModel: "NVIDIA A100-PCIE-40GB", GPUs: 4, MemoryTotal: 40 * gib},
		{Name: "t401", GPUModel: "Tesla T4", GPUs: 4, MemoryTotal: 15 * gib},
	})
	tests := []struct {
		name  string
		job   func() Job
		types []GPUType // the cluster's GPU types; nil: none known
		want  []want
	}{
		{name: "nothing to change", job: func() Job { return job(6*h, busy(70, 40), busy(70, 40)) }},
		{name: "no GPU data, no record of a limit", job: func() Job {
			j := job(6 * h)
			j.TimeLimit = 0
			return j
		}},
		{name: "one of two GPUs unused", job: func() Job { return job(6*h, busy(70, 40), idleGPU()) },
			want: []want{{HintUnusedGPUs, "--gres=gpu:1", []string{"1 of the 2 GPUs", "below 5 %"}}}},
		{name: "unused, with the requested type", job: func() Job {
			j := job(6*h, busy(70, 40), busy(3, 1), busy(70, 40))
			j.ReqGPUType = "a100"
			return j
		}, want: []want{{HintUnusedGPUs, "--gres=gpu:a100:2", []string{"1 of the 3 GPUs"}}}},
		{name: "a type not fit for a command line is left out", job: func() Job {
			j := job(6*h, busy(70, 40), idleGPU())
			j.ReqGPUType = "a100;rm -rf ~"
			return j
		}, want: []want{{HintUnusedGPUs, "--gres=gpu:1", nil}}},
		{name: "several nodes: GPUs per job", job: func() Job {
			a, b, d := busy(70, 40), idleGPU(), idleGPU()
			d.Node = "gpu02"
			e := busy(70, 40)
			e.Node = "gpu02"
			return job(6*h, a, b, d, e)
		}, want: []want{{HintUnusedGPUs, "--gpus=2", []string{"2 of the 4 GPUs"}}}},
		{name: "no GPU used", job: func() Job { return job(6*h, idleGPU(), idleGPU()) },
			want: []want{{HintUnusedGPUs, "", []string{"None of the 2 GPUs", "CPU partition"}}}},
		// Issue 30: a process that held 2 GiB and computed nothing is never
		// told to run without a GPU.
		// Issue 30: and it is told what its measured need fits — one GPU,
		// and its 2 GiB peak fits a shard by the sharing rule.
		{name: "quiet GPUs, memory held on one: keep one, or a shard", job: func() Job { return job(6*h, idleGPU(), busy(1, 2)) },
			want: []want{
				{HintUnusedGPUs, "--gres=gpu:1", []string{"All 2 GPUs were quiet", "held GPU memory", "fails without a GPU", "it used 1 of its 2 GPUs, so ask for 1"}},
				{HintShard, "--gres=shard:1", []string{"2 GiB of the 80 GiB", "gres/shard"}},
			}},
		{name: "three of four GPUs unused: ask for the one used", job: func() Job { return job(6*h, busy(70, 40), idleGPU(), idleGPU(), idleGPU()) },
			want: []want{{HintUnusedGPUs, "--gres=gpu:1", []string{"3 of the 4 GPUs", "it used 1 of its 4 GPUs, so ask for 1"}}}},
		{name: "four quiet GPUs, SM activity 0, memory held: one GPU or a shard, no measurable work", job: func() Job {
			return job(6*h, withSM(busy(40, 5), 0), withSM(busy(40, 5), 0), withSM(busy(40, 5), 0), withSM(busy(40, 5), 0))
		}, want: []want{
			{HintUnusedGPUs, "--gres=gpu:1", []string{"All 4 GPUs were quiet", "SM activity 0 %: its kernels did no measurable work", "it used 1 of its 4 GPUs, so ask for 1"}},
			{HintShard, "--gres=shard:1", []string{"5 GiB of the 80 GiB", "SM activity 0 %: its kernels did no measurable work"}},
		}},
		{name: "busy by the duty cycle, SM activity 0: a shard, no measurable work", job: func() Job { return job(6*h, withSM(busy(40, 5), 0)) },
			want: []want{{HintShard, "--gres=shard:1", []string{"5 GiB of the 80 GiB", "SM activity 0 %: its kernels did no measurable work"}}}},
		{name: "busy by the duty cycle, SM activity 25 %: a shard, it computed", job: func() Job { return job(6*h, withSM(busy(80, 8), 25)) },
			want: []want{{HintShard, "--gres=shard:1", []string{"SM activity 25 %"}}}},
		{name: "SM activity on a shared GPU is the device's: the duty cycle, said so", job: func() Job {
			g := withSM(busy(10, 8), 0)
			g.ActivityScope = profile.ActivityScopeSharedGPU
			return job(6*h, g)
		}, want: []want{{HintShard, "--gres=shard:1", []string{"duty cycle 10 %, SM activity not measured"}}}},
		{name: "small and quiet, duty cycle only: said so", job: func() Job { return job(6*h, busy(10, 8)) },
			want: []want{{HintShard, "--gres=shard:1", []string{"duty cycle 10 %, SM activity not measured: whether its kernels computed is unknown"}}}},
		{name: "SM activity 35 %: no shard", job: func() Job { return job(6*h, withSM(busy(90, 8), 35)) }},
		{name: "one quiet GPU with memory held: a shard, never no GPU", job: func() Job { return job(6*h, busy(0, 5)) },
			want: []want{{HintShard, "--gres=shard:1", []string{"gres/shard"}}}},
		{name: "small and quiet: a shard", job: func() Job { return job(6*h, busy(10, 8)) },
			want: []want{{HintShard, "--gres=shard:1", []string{"8 GiB of the 80 GiB", "10 %", "gres/shard"}}}},
		{name: "already on a shard", job: func() Job {
			j := job(6*h, busy(10, 8))
			j.ReqGPUs, j.ReqShards = 0, 1
			return j
		}},
		{name: "small but busy: no shard", job: func() Job { return job(6*h, busy(50, 8)) }},
		{name: "quiet but large: no shard", job: func() Job { return job(6*h, busy(10, 30)) }},
		{name: "memory full: a larger card", job: func() Job { return job(6*h, busy(90, 78)) },
			want: []want{{HintLargerGPU, "--gres=gpu:<type>:1", []string{"78 GiB of 80 GiB", "97.5 %", h100, "more than 80 GiB"}}}},
		{name: "memory full and a GPU unused", job: func() Job { return job(6*h, busy(90, 78), idleGPU()) },
			want: []want{{HintUnusedGPUs, "--gres=gpu:1", nil}, {HintLargerGPU, "--gres=gpu:<type>:1", nil}}},
		{name: "quiet GPUs, one with full memory: it used that one", job: func() Job { return job(6*h, busy(1, 78), busy(1, 2)) },
			want: []want{
				{HintUnusedGPUs, "--gres=gpu:1", []string{"All 2 GPUs were quiet", "97.5 % of a card", "the 1 whose memory"}},
				{HintLargerGPU, "--gres=gpu:<type>:1", nil},
			}},
		{name: "one quiet GPU with full memory: never run without it", job: func() Job { return job(6*h, busy(1, 78)) },
			want: []want{{HintLargerGPU, "--gres=gpu:<type>:1", []string{"78 GiB of 80 GiB"}}}},
		{name: "preallocated: let memory grow", job: func() Job {
			g := busy(60, 78)
			g.Preallocated = true
			return job(6*h, g)
		}, want: []want{
			{HintGrowMemory, "export TF_FORCE_GPU_ALLOW_GROWTH=true", []string{"97.5 %", "TensorFlow"}},
			{HintGrowMemory, "export XLA_PYTHON_CLIENT_PREALLOCATE=false", []string{"JAX"}},
		}},
		{name: "limit 24 times the run", job: func() Job { return job(h, busy(70, 40)) },
			want: []want{{HintTimeLimit, "--time=01:30:00", []string{"01:00:00 of its 1-00:00:00 limit", "24×"}}}},
		{name: "limit rounded up to 5 minutes", job: func() Job { return job(61*time.Minute, busy(70, 40)) },
			want: []want{{HintTimeLimit, "--time=01:35:00", nil}}},
		{name: "limit in days", job: func() Job {
			j := job(40*h, busy(70, 40))
			j.TimeLimit = 14 * 24 * h
			return j
		}, want: []want{{HintTimeLimit, "--time=2-12:00:00", nil}}},
		{name: "limit 4 times the run: below the ratio", job: func() Job { return job(6*h, busy(70, 40)) }},
		{name: "failed job: no limit hint", job: func() Job {
			j := job(h, busy(70, 40))
			j.State = "FAILED"
			return j
		}},
		{name: "crashed after seconds: no limit hint", job: func() Job { return job(30*time.Second, busy(70, 40)) }},
		{name: "unlimited", job: func() Job {
			j := job(h, busy(70, 40))
			j.TimeLimit, j.Unlimited = 0, true
			return j
		}},
		{name: "host out of memory", job: func() Job {
			j := job(6*h, busy(70, 40))
			j.State = "OUT_OF_MEMORY"
			return j
		}, want: []want{{HintHostMemory, "--mem=<size>", []string{"OUT_OF_MEMORY", "not GPU memory"}}}},
		{name: "timed out", job: func() Job {
			j := job(24*h, busy(70, 40))
			j.State, j.TimeLimit = "TIMEOUT", 24*h
			return j
		}, want: []want{{HintTimedOut, "--time=1-12:00:00", []string{"TIMEOUT", "1-00:00:00 limit", "checkpoints"}}}},
		{name: "timed out without a known limit: no hint", job: func() Job {
			j := job(24*h, busy(70, 40))
			j.State, j.TimeLimit, j.Unlimited = "TIMEOUT", 0, false
			return j
		}},
		{name: "IO-bound: stage the data", job: func() Job {
			j := job(6*h, busy(10, 40))
			j.IOWait, j.IOWaitValid, j.IOScope = 0.5, true, profile.IOScopeCgroup
			return j
		}, want: []want{{HintStageData, "", []string{"50 %", "10 %", "node-local"}}}},
		{name: "IO wait on a quiet node scope not accepted", job: func() Job {
			c := job(6*h, busy(10, 40))
			c.IOWait, c.IOWaitValid, c.IOScope = 0.5, true, profile.IOScopeNone
			return c
		}},
		// The smaller_gpu hint (issue 30).
		{name: "small and quiet, no inventory: a shard, no GPU type", job: func() Job { return job(6*h, busy(10, 8)) },
			want: []want{{HintShard, "--gres=shard:1", nil}}},
		{name: "small and quiet: a shard, then the smallest type that holds 8 GiB × 1.2", job: func() Job { return job(6*h, busy(10, 8)) },
			types: cluster,
			want: []want{
				{HintShard, "--gres=shard:1", nil},
				{HintSmallerGPU, "--gres=gpu:t4:1", []string{"8 GiB of the 80 GiB of its " + h100, "type t4 (Tesla T4, 15 GiB per GPU) is the smallest GPU type of this cluster", "1.2× margin", "duty cycle 10 %"}},
			}},
		{name: "quiet, too large for a shard: the smallest type that fits, no shard", job: func() Job { return job(6*h, busy(10, 30)) },
			types: cluster,
			want:  []want{{HintSmallerGPU, "--gres=gpu:a100:1", []string{"30 GiB of the 80 GiB", "type a100 (NVIDIA A100-PCIE-40GB, 40 GiB per GPU)"}}}},
		{name: "a type with less than the peak plus margin is never named", job: func() Job { return job(6*h, busy(10, 14)) },
			// 14 GiB × 1.2 = 16.8 GiB: not a T4's 15; an L4's 24.
			types: cluster,
			want:  []want{{HintShard, "--gres=shard:1", nil}, {HintSmallerGPU, "--gres=gpu:l4:1", []string{"14 GiB", "24 GiB"}}}},
		{name: "no type of the cluster holds it: none", job: func() Job { return job(6*h, busy(10, 35)) },
			types: GPUTypes([]Node{{Name: "t401", GPUModel: "Tesla T4", GPUs: 4, MemoryTotal: 15 * gib}})},
		{name: "only its own type in the cluster: none", job: func() Job { return job(6*h, busy(10, 8)) },
			types: GPUTypes([]Node{{Name: "gpu01", GPUModel: h100, GPUs: 4, MemoryTotal: card}}),
			want:  []want{{HintShard, "--gres=shard:1", nil}}},
		{name: "a smaller card of its own type: not another type, none", job: func() Job { return job(6*h, busy(10, 8)) },
			types: []GPUType{{Type: "h100", Model: "NVIDIA H100 PCIe 40GB", Memory: 40 * gib}},
			want:  []want{{HintShard, "--gres=shard:1", nil}}},
		{name: "a larger card is never a smaller type", job: func() Job { return job(6*h, busy(10, 30)) },
			types: []GPUType{{Type: "h200", Model: "NVIDIA H200", Memory: 141 * gib}}},
		{name: "memory full: a larger card, never a smaller one", job: func() Job { return job(6*h, busy(10, 78)) },
			types: cluster,
			want:  []want{{HintLargerGPU, "--gres=gpu:<type>:1", nil}}},
		{name: "busy: no smaller type", job: func() Job { return job(6*h, busy(50, 8)) }, types: cluster},
		{name: "SM activity 35 %: no smaller type", job: func() Job { return job(6*h, withSM(busy(90, 8), 35)) }, types: cluster},
		{name: "preallocated: the need is unknown, no smaller type", job: func() Job {
			g := busy(10, 8)
			g.Preallocated = true
			return job(6*h, g)
		}, types: cluster, want: []want{
			{HintGrowMemory, "export TF_FORCE_GPU_ALLOW_GROWTH=true", nil},
			{HintGrowMemory, "export XLA_PYTHON_CLIENT_PREALLOCATE=false", nil},
		}},
		{name: "already on a shard: no smaller type", job: func() Job {
			j := job(6*h, busy(10, 8))
			j.ReqGPUs, j.ReqShards = 0, 1
			return j
		}, types: cluster},
		{name: "two quiet-ish GPUs, both used: two of the smaller type, no shard", job: func() Job { return job(6*h, busy(10, 8), busy(12, 6)) },
			types: cluster,
			want:  []want{{HintSmallerGPU, "--gres=gpu:t4:2", []string{"barely used its GPUs"}}}},
		{name: "quiet GPUs, memory held on one: one GPU, a shard, or one smaller card", job: func() Job { return job(6*h, idleGPU(), busy(1, 2)) },
			types: cluster,
			want: []want{
				{HintUnusedGPUs, "--gres=gpu:1", nil},
				{HintShard, "--gres=shard:1", nil},
				{HintSmallerGPU, "--gres=gpu:t4:1", []string{"2 GiB"}},
			}},
		{name: "several nodes: smaller GPUs per job", job: func() Job {
			a, b := busy(10, 8), busy(10, 8)
			b.Node = "gpu02"
			return job(6*h, a, b)
		}, types: cluster, want: []want{{HintSmallerGPU, "--gpus=t4:2", nil}}},
		{name: "several problems, in rule order", job: func() Job { return job(h, busy(90, 78), idleGPU()) },
			want: []want{
				{HintUnusedGPUs, "--gres=gpu:1", nil},
				{HintLargerGPU, "--gres=gpu:<type>:1", nil},
				{HintTimeLimit, "--time=01:30:00", nil},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := tt.job()
			got := Hints(j, c, tt.types)
			if got == nil {
				t.Fatal("Hints = nil, want a non-nil slice")
			}
			if len(got) != len(tt.want) {
				t.Fatalf("Hints = %+v, want %d hints %+v", got, len(tt.want), tt.want)
			}
			seen := map[string]bool{}
			for i, w := range tt.want {
				g := got[i]
				if g.Rule != w.rule || g.Option != w.option {
					t.Errorf("hint %d = %s %q, want %s %q", i, g.Rule, g.Option, w.rule, w.option)
				}
				for _, s := range w.why {
					if !strings.Contains(g.Why, s) {
						t.Errorf("hint %d why = %q, want it to contain %q", i, g.Why, s)
					}
				}
				if g.Why == "" || !strings.HasSuffix(g.Why, ".") || strings.Contains(g.Why, "%!") {
					t.Errorf("hint %d why = %q: want one finished sentence", i, g.Why)
				}
				if g.Option != "" && seen[g.Option] {
					t.Errorf("option %q twice", g.Option)
				}
				seen[g.Option] = true
			}
			if again := Hints(j, c, tt.types); !reflect.DeepEqual(again, got) {
				t.Errorf("Hints is not deterministic: %+v then %+v", got, again)
			}
		})
	}
}

func TestHintsFollowConfig(t *testing.T) {
	j := job(6*time.Hour, busy(10, 8))
	c := DefaultConfig()
	if got := Hints(j, c, nil); len(got) != 1 || got[0].Rule != HintShard {
		t.Fatalf("default config: %+v, want one shard hint", got)
	}
	c.Recommend.SharingVRAMMax = 0.05 // 8 of 80 GiB is now too much for a shard
	if got := Hints(j, c, nil); len(got) != 0 {
		t.Errorf("sharing_vram_max 0.05: %+v, want none", got)
	}
	// A peak that counts as full memory asks for a larger GPU, never also
	// for a shard of one.
	c = DefaultConfig()
	c.Bottlenecks.VRAMBoundFrac = 0.1
	if got := Hints(j, c, nil); len(got) != 1 || got[0].Rule != HintLargerGPU {
		t.Errorf("vram_bound_frac 0.1: %+v, want larger_gpu alone", got)
	}
	// The smaller type follows the same thresholds: the sharing margin
	// sizes the need (8 GiB × 2 = 16 GiB: no longer a T4's 15 GiB), and a
	// card on which the peak would reach vram_bound_frac is none.
	t4l4 := []GPUType{{Type: "t4", Model: "Tesla T4", Memory: 15 << 30}, {Type: "l4", Model: "NVIDIA L4", Memory: 24 << 30}}
	c = DefaultConfig()
	c.Recommend.SharingVRAMMax = 0.05
	if got := Hints(j, c, t4l4); len(got) != 1 || got[0].Option != "--gres=gpu:t4:1" {
		t.Errorf("default margin: %+v, want a t4", got)
	}
	c.Recommend.SharingMargin = 2
	if got := Hints(j, c, t4l4); len(got) != 1 || got[0].Option != "--gres=gpu:l4:1" {
		t.Errorf("sharing_margin 2: %+v, want an l4", got)
	}
	c = DefaultConfig()
	c.Recommend.SharingVRAMMax, c.Recommend.SharingMargin, c.Bottlenecks.VRAMBoundFrac = 0.05, 1, 0.5
	if got := Hints(j, c, t4l4); len(got) != 1 || got[0].Option != "--gres=gpu:l4:1" {
		t.Errorf("vram_bound_frac 0.5: %+v, want an l4 (8 GiB is over half a t4)", got)
	}
}

// TestGPUTypes: the types a job can ask for, from an inventory.
func TestGPUTypes(t *testing.T) {
	tests := []struct {
		name  string
		nodes []Node
		want  []GPUType
	}{
		{name: "no inventory"},
		{name: "slurm.conf only: no card size, no type", nodes: []Node{{Name: "n1", GPUModel: "h100", GPUs: 8}}},
		{name: "no GPUs", nodes: []Node{{Name: "n1", GPUModel: "Tesla T4", MemoryTotal: 15 * gib}}},
		{name: "a model without a type of its own", nodes: []Node{{Name: "n1", GPUModel: "NVIDIA", GPUs: 1, MemoryTotal: 15 * gib}}},
		{name: "smallest memory first, one per type, the least memory of its models", nodes: []Node{
			{Name: "a", GPUModel: h100, GPUs: 8, MemoryTotal: card},
			{Name: "b", GPUModel: "NVIDIA A100-SXM4-80GB", GPUs: 8, MemoryTotal: 80 * gib},
			{Name: "c", GPUModel: "NVIDIA A100-PCIE-40GB", GPUs: 4, MemoryTotal: 40 * gib},
			{Name: "d", GPUModel: "Tesla T4", GPUs: 4, MemoryTotal: 15 * gib},
			{Name: "e", GPUModel: "Tesla T4", GPUs: 4, MemoryTotal: 15 * gib},
		}, want: []GPUType{
			{Type: "t4", Model: "Tesla T4", Memory: 15 * gib},
			{Type: "a100", Model: "NVIDIA A100-PCIE-40GB", Memory: 40 * gib},
			{Type: "h100", Model: h100, Memory: card},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := GPUTypes(tt.nodes); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("GPUTypes = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestGPUsUsed: the count every piece of advice uses (hints, the per-user
// recommendations). A job that held GPU memory — a full card, or any
// memory on a quiet GPU — used at least one GPU and is never told to run
// without one.
func TestGPUsUsed(t *testing.T) {
	tests := []struct {
		name                  string
		held, unused, memHeld int
		vramBound             bool
		want                  int
	}{
		{name: "all busy", held: 2, want: 2},
		{name: "one unused", held: 3, unused: 1, want: 2},
		{name: "none used, no memory", held: 2, unused: 2, want: 0},
		{name: "none used, memory held on one", held: 2, unused: 2, memHeld: 1, want: 1},
		{name: "none used, memory held on both: frameworks hold memory on every GPU they see", held: 2, unused: 2, memHeld: 2, want: 1},
		{name: "one used, memory on the other", held: 2, unused: 1, memHeld: 1, want: 1},
		{name: "none used, a card full", held: 1, unused: 1, vramBound: true, want: 1},
		{name: "no GPU", want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := gpusUsed(tt.held, tt.unused, tt.memHeld, tt.vramBound); got != tt.want {
				t.Errorf("gpusUsed(%d, %d, %d, %v) = %d, want %d", tt.held, tt.unused, tt.memHeld, tt.vramBound, got, tt.want)
			}
		})
	}
}
