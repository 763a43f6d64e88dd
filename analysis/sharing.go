package analysis

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/gpuprof/gpuprof/internal/present"
)

// sharingPlan is the shard sizing for one GPU model, kept for the per-user
// hints.
type sharingPlan struct {
	partition string
	shards    int
	need      uint64 // bytes per job, after the margin
	card      uint64
	changes   []Change // the shards and the partition, as a replay applies them
}

// GRESType derives the GRES type Slurm users name from an NVML model name:
// "NVIDIA H100 80GB HBM3" → "h100", "NVIDIA A100-SXM4-80GB" → "a100".
func GRESType(model string) string {
	fields := strings.Fields(strings.ToLower(model))
	for _, f := range fields {
		if f == "nvidia" || f == "tesla" || f == "geforce" || f == "rtx" && len(fields) > 2 {
			continue
		}
		if i := strings.IndexByte(f, '-'); i > 0 {
			f = f[:i]
		}
		if validName(f) {
			return f
		}
	}
	return "gpu"
}

// fitsShard is the sharing rule's memory test, read by the gpu_shards
// recommendation and the per-job shard hint alike: a memory need of at
// most recommend.sharing_vram_max of the card (card > 0) fits a shard.
func fitsShard(need, card uint64, rc *RecommendConfig) bool {
	return card > 0 && float64(need) <= rc.SharingVRAMMax*float64(card)
}

// needWithMargin is a memory need in bytes with the margin the sharing
// rule sizes shards by (recommend.sharing_margin), rounded up: the shard
// recommendation divides a card by it, and the smaller_gpu hint asks it of
// a smaller card (fitsCard).
func needWithMargin(need float64, rc *RecommendConfig) uint64 {
	return uint64(math.Ceil(need * rc.SharingMargin))
}

// recommendSharing sizes GPU time-sharing per GPU model from the memory
// needs of small, low-utilisation single-GPU jobs: shards (with the
// per-job memory cap they need), MPS on top where the candidates compute,
// and a MIG layout on MIG-capable cards. It returns the models for which
// shards were recommended.
//
// It stays one function: a model's shard, MPS and MIG recommendations are
// sized from the same candidates, need with margin, partition and nodes,
// and MPS and MIG are offered only where shards are; split, each would
// take the model's accumulator and those values as arguments.
func recommendSharing(b *recBuilder, in *Input, f *facts) map[string]sharingPlan {
	rc, low := &b.c.Recommend, b.c.Classes.LowUtilMax
	type acc struct {
		card                uint64
		hours, candHours    float64 // sums, once every job is added
		sumHours, sumCand   ExactSum
		needs               []float64
		utils               []float64
		users               map[string]bool
		jobs, preallocSkips int
		bySM                int
		cands               map[int]bool
	}
	models := map[string]*acc{}
	everyone := map[int]bool{}
	for i := range f.jobs {
		j := &f.jobs[i]
		everyone[int(j.idx)] = true
		if j.model == "" || j.card == 0 {
			continue
		}
		a := models[j.model]
		if a == nil {
			a = &acc{card: j.card, users: map[string]bool{}, cands: map[int]bool{}}
			models[j.model] = a
		}
		a.sumHours.Add(j.gpuHours)
		a.jobs++
		// How much of the GPU a job used is its SM activity where GPM
		// measured it (a job that kept the GPU nominally busy with tiny
		// kernels shares well), else its duty cycle.
		if j.gpus != 1 || !j.utilOK || j.compute >= low {
			continue
		}
		if j.need == 0 {
			if j.prealloc {
				a.preallocSkips++
			}
			continue
		}
		if !fitsShard(j.need, j.card, rc) {
			continue
		}
		a.sumCand.Add(j.gpuHours)
		a.cands[int(j.idx)] = true
		a.needs = append(a.needs, float64(j.need))
		a.utils = append(a.utils, j.compute)
		if j.computeSM {
			a.bySM++
		}
		a.users[j.user] = true
	}
	out := map[string]sharingPlan{}
	if len(models) == 0 {
		b.nothing(RecShards, "no GPU model known (no job has a per-GPU record with the card's size: sacct history, unprofiled shard jobs): GPU sharing cannot be sized")
	}
	for _, model := range sortedKeys(models) {
		a := models[model]
		a.hours, a.candHours = a.sumHours.Float(), a.sumCand.Float()
		n := len(a.needs)
		share := 0.0
		if a.hours > 0 {
			share = a.candHours / a.hours
		}
		preNote := ""
		if a.preallocSkips > 0 {
			preNote = fmt.Sprintf("; %d low-utilisation runs left out because a framework preallocated the memory and no lower floor was measured", a.preallocSkips)
		}
		if n < rc.MinJobs || share < rc.SharingShareMin {
			b.nothing(RecShards, "%s: %d small low-utilisation jobs hold %s of its GPU-hours (need ≥ %d jobs and ≥ %s): no sharing%s",
				model, n, present.Share(share), rc.MinJobs, present.Share(rc.SharingShareMin), preNote)
			continue
		}
		nd, ud := distOf(a.needs), distOf(a.utils)
		need := needWithMargin(nd.P95, rc)
		shards := min(rc.MaxShards, int(a.card/max(need, 1)))
		if shards < 2 {
			b.nothing(RecShards, "%s: p95 need %s × %v margin leaves room for fewer than 2 jobs per card", model, present.GiB(uint64(nd.P95))+" GiB", rc.SharingMargin)
			continue
		}
		// The first shared model's partition is "shared"; further models
		// get their own, so that each partition's nodes and QOS agree.
		part, qos := sharedPartition, sharedQOS
		if len(out) > 0 {
			part, qos = sharedPartition+"-"+GRESType(model), sharedQOS+"-"+GRESType(model)
		}
		nodes := nodesOf(in.Nodes, model)
		shardChanges := []Change{
			{Kind: ChangeShards, Model: model, Count: shards, Spec: fmt.Sprintf("%d shards per %s GPU", shards, GRESType(model))},
			PartitionChange(part, nodes, 0, 0, true),
		}
		out[model] = sharingPlan{partition: part, shards: shards, need: need, card: a.card, changes: shardChanges}
		whole := minus(everyone, a.cands)
		evidence := []Reason{
			{Rule: "sharing.candidates", Note: fmt.Sprintf("%d single-GPU jobs of %d users on %s peak at ≤ %s of the card with mean util < %s",
				n, len(a.users), model, present.Share(rc.SharingVRAMMax), formatPercent(low))},
			{Rule: "sharing.share", Checks: []Check{{Metric("gpu_hours_share"), share, OpGE, rc.SharingShareMin}},
				Note: fmt.Sprintf("%s of %s GPU-hours", present.GPUHours(a.candHours), present.GPUHours(a.hours))},
			{Rule: "sharing.need", Note: fmt.Sprintf("memory need p50 %s, p95 %s, max %s of %s; util p50 %s, p95 %s%s",
				present.GiB(uint64(nd.P50))+" GiB", present.GiB(uint64(nd.P95))+" GiB", present.GiB(uint64(nd.Max))+" GiB", present.GiB(a.card)+" GiB",
				formatPercent(ud.P50), formatPercent(ud.P95), preNote)},
		}
		capFrac := math.Floor(float64(need)/float64(a.card)*100) / 100
		capFrac = max(capFrac, 0.01)
		r := Recommendation{
			Kind:  RecShards,
			Title: fmt.Sprintf("Share %s GPUs: %d shards per GPU", GRESType(model), shards),
			Change: fmt.Sprintf("Configure %d shards per %s GPU and a partition %q for shard jobs. Shards isolate nothing: every shard job must cap its memory at %s (%.2f of the card), e.g. torch.cuda.set_per_process_memory_fraction(%.2f), XLA_PYTHON_CLIENT_MEM_FRACTION, or CUDA_MPS_PINNED_DEVICE_MEM_LIMIT under MPS. The node lines name the GPU type (gpu:%s), so gres.conf must list these GPUs with Type=%s (AutoDetect=nvml does); merge the Gres= part into each node's existing NodeName line.",
				shards, model, part, present.GiB(need)+" GiB", capFrac, capFrac, GRESType(model), GRESType(model)),
			Evidence: evidence,
			Effect: fmt.Sprintf("%s GPU-hours of small work could run %d to a card, freeing up to %s GPU-hours (%s of the model's) for whole-GPU jobs.",
				present.GPUHours(a.candHours), shards, present.GPUHours(a.candHours*(1-1/float64(shards))), present.Share(share*(1-1/float64(shards)))),
		}
		r.Config = shardConfig(model, nodes, shards, capFrac, part, qos)
		// Replayed: the shards on every node of the model, and the
		// candidates on one shard each in the shard partition.
		r.Replay = &ReplaySpec{
			Changes: append(slices.Clone(shardChanges), Change{Kind: ChangeJobs, Spec: "small jobs on shard:1",
				Rewrite: &JobRewrite{Jobs: a.cands, Shards: 1, Partition: part}}),
			Group: whole, GroupName: "whole-GPU jobs",
		}
		b.add(r, n, share, rc.SharingShareMin)

		// The measure the candidates were sized by: SM activity when GPM
		// measured every one, the duty cycle when none, and said when mixed.
		mpsMetric, mpsWhat, mpsNote := MetricUtilMean, "utilisation", ""
		switch {
		case a.bySM == n:
			mpsMetric, mpsWhat = MetricSMMean, "SM activity"
		case a.bySM > 0:
			mpsNote = fmt.Sprintf(" (SM activity for %d of the %d, the duty cycle for the rest)", a.bySM, n)
		}
		if ud.P50 >= rc.MPSUtilMin {
			pct := min(100, max(10, int(math.Ceil(ud.P95/10))*10))
			gib := int(math.Ceil(float64(need) / (1 << 30)))
			b.add(Recommendation{
				Kind:  RecMPS,
				Title: fmt.Sprintf("Run MPS on the shared %s GPUs", GRESType(model)),
				Change: fmt.Sprintf("Start nvidia-cuda-mps-control -d on the shared nodes; shard jobs set an active thread percentage of %d and a pinned memory limit of %dG, which MPS enforces.",
					pct, gib),
				Evidence: []Reason{{Rule: "mps.util", Checks: []Check{{mpsMetric, ud.P50, OpGE, rc.MPSUtilMin}},
					Note: fmt.Sprintf("median of the candidates' mean %s; p95 %s%s", mpsWhat, formatPercent(ud.P95), mpsNote)}},
				Effect: "Concurrent kernels of the sharing jobs overlap instead of time-slicing, and a job over its memory limit fails alone.",
				Replay: &ReplaySpec{Why: "MPS changes how shard jobs run together, not how they queue: its queue effect is the shard recommendation's"},
				Config: []ConfigLine{
					{TargetSbatch, fmt.Sprintf("export CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=%d", pct)},
					{TargetSbatch, fmt.Sprintf("export CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=%dG", gib)},
				},
			}, n, ud.P50, rc.MPSUtilMin)
		}

		if t, ok := MIGTable(model, a.card); ok {
			// MIG enforces the memory size: a job over it fails, so the
			// instance must hold the need with the margin.
			if lay, ok := PackMIG(t, need); ok {
				specs := make([]string, lay.Count)
				for i := range specs {
					specs[i] = lay.Profile.Name
				}
				b.add(Recommendation{
					Kind:  RecMIG,
					Title: fmt.Sprintf("Alternative: MIG %d×%s on some %s GPUs", lay.Count, lay.Profile.Name, GRESType(model)),
					Change: fmt.Sprintf("Partition GPUs for small work into %d × %s (nvidia-smi mig -cgi %s -C), which isolates memory and compute in hardware; Slurm then sees typed GPUs via AutoDetect=nvml (not in Debian's slurm-wlm).",
						lay.Count, lay.Profile.Name, strings.Join(specs, ",")),
					Evidence: []Reason{{Rule: "mig.pack", Note: fmt.Sprintf("p95 need with margin %s fits %s (%g GB, %d of 7 compute slices); %d instances per GPU",
						present.GiB(need)+" GiB", lay.Profile.Name, lay.Profile.MemoryGB, lay.Profile.Slices, lay.Count)}},
					Effect: fmt.Sprintf("%d isolated jobs per card instead of 1.", lay.Count),
					// Replayed like shards: each GPU of the model holds
					// lay.Count instances, one per candidate job.
					Replay: &ReplaySpec{
						Changes: []Change{
							{Kind: ChangeShards, Model: model, Count: lay.Count, Spec: fmt.Sprintf("%d MIG instances per %s GPU", lay.Count, GRESType(model))},
							PartitionChange(part, nodes, 0, 0, true),
							{Kind: ChangeJobs, Spec: "small jobs on one MIG instance", Rewrite: &JobRewrite{Jobs: a.cands, Shards: 1, Partition: part}},
						},
						Group: whole, GroupName: "whole-GPU jobs",
					},
				}, n, share, rc.SharingShareMin)
			}
		}
	}
	return out
}

func nodesOf(nodes []Node, model string) []Node {
	var out []Node
	for _, n := range nodes {
		if n.GPUModel == model && n.GPUs > 0 && validName(n.Name) {
			out = append(out, n)
		}
	}
	slices.SortFunc(out, func(a, b Node) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// shardConfig writes the slurm.conf, gres.conf and partition lines of
// shards on the model's nodes, and the sbatch lines of a shard job.
func shardConfig(model string, nodes []Node, shards int, capFrac float64, part, qos string) []ConfigLine {
	typ := GRESType(model)
	cl := []ConfigLine{
		{TargetSlurmConf, "GresTypes=gpu,shard"},
		{TargetSlurmConf, "AccountingStorageTRES=gres/gpu,gres/shard"},
	}
	for _, n := range nodes {
		cl = append(cl,
			ConfigLine{TargetSlurmConf, fmt.Sprintf("NodeName=%s Gres=gpu:%s:%d,shard:%d", n.Name, typ, n.GPUs, n.GPUs*shards)},
			ConfigLine{TargetGresConf, fmt.Sprintf("NodeName=%s Name=shard Count=%d", n.Name, n.GPUs*shards)})
	}
	if len(nodes) > 0 {
		cl = append(cl,
			ConfigLine{TargetSacctmgr, "sacctmgr -i add qos " + qos},
			ConfigLine{TargetSacctmgr, fmt.Sprintf("sacctmgr -i modify qos %s set MaxTRESPerJob=gres/shard=1 MaxTRESPerUser=gres/shard=%d Flags=DenyOnLimit", qos, shards)},
			ConfigLine{TargetSlurmConf, fmt.Sprintf("PartitionName=%s Nodes=%s MaxTime=1-00:00:00 DefaultTime=01:00:00 QOS=%s State=UP", part, nodeList(nodes), qos)})
	}
	return append(cl,
		ConfigLine{TargetSbatch, "#SBATCH --partition=" + part},
		ConfigLine{TargetSbatch, "#SBATCH --gres=shard:1"},
		ConfigLine{TargetSbatch, fmt.Sprintf("export XLA_PYTHON_CLIENT_MEM_FRACTION=%.2f", capFrac)})
}
