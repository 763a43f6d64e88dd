package analysis

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/gpuprof/gpuprof/internal/present"
	"github.com/gpuprof/gpuprof/slurmext"
)

// Hint is one change a user can make to their next submission of a job,
// with the measurement that calls for it.
//
// Option is what to write: an sbatch option ("--gres=gpu:1",
// "--time=02:00:00", "--gres=shard:1", "--mem=<size>") or a line for the
// batch script ("export TF_FORCE_GPU_ALLOW_GROWTH=true"). Where the right
// value is not in the job's data, the option holds one placeholder in
// angle brackets ("--gres=gpu:<type>:1") that Why says how to fill. Option
// is empty when the change is not an option at all (staging data to local
// disk): Why then says what to do.
type Hint struct {
	Option string `json:"option"`
	// Why is one sentence with the numbers behind the hint.
	Why string `json:"why"`
	// Rule names the rule that gave the hint: one of the Hint* constants.
	Rule string `json:"rule"`
}

// Hint rules, in the order Hints returns their hints.
const (
	// HintUnusedGPUs: some GPUs were unused (Metrics.UnusedGPUs): ask for
	// the ones used; none used: ask for none. A GPU whose memory filled
	// (larger_gpu) counts as used, whatever its utilisation (gpusUsed).
	HintUnusedGPUs = "unused_gpus"
	// HintShard: one whole GPU used (a single-GPU job, or one whose GPUs
	// were all quiet and that held memory on one) with a memory peak that
	// fits a shard by the sharing rule (fitsShard: at most
	// recommend.sharing_vram_max of the card) and a compute measure
	// (Metrics.Compute: SM activity where GPM measured it, else the duty
	// cycle) below classes.low_util_max: a shard of one is enough. Never
	// with larger_gpu (a threshold set that low makes both match). The
	// quiet-GPU hints say what the kernels did (computeNote).
	HintShard = "shard"
	// HintSmallerGPU: a whole-GPU job that barely used its GPUs (the
	// compute measure below classes.low_util_max, as for the shard hint)
	// and whose memory peak fits a smaller card of another GPU type of the
	// cluster (fitsCard: the peak times recommend.sharing_margin, the
	// margin the sharing rule sizes needs with, at most the card, and
	// below bottlenecks.vram_bound_frac of it) is told the smallest such
	// type: --gres=gpu:<type>:N, N the GPUs it used. Only types of the
	// inventory passed to Hints with a known card size; none without one.
	// Never with larger_gpu, nor for a preallocated peak (the real need
	// is unknown). It comes after the shard hint, and both are given when
	// both fit: a shard is the smaller ask, but whether the cluster
	// offers shards is not known to the hint (a node's shard count is 0
	// for "none" and "unknown" alike), and a smaller whole GPU needs no
	// shard configuration and isolates the job's memory.
	HintSmallerGPU = "smaller_gpu"
	// HintLargerGPU: a GPU's memory peak reached
	// bottlenecks.vram_bound_frac of its card: ask for a type with more.
	HintLargerGPU = "larger_gpu"
	// HintGrowMemory: a framework reserved the card's memory at start
	// (TensorFlow, JAX), hiding what the job needs: let it grow instead.
	HintGrowMemory = "grow_memory"
	// HintTimeLimit: a completed job's limit was at least
	// recommend.over_request_ratio times its run time: ask for 1.5 times
	// the run time, rounded up to 5 minutes.
	HintTimeLimit = "time_limit"
	// HintTimedOut: Slurm ended the job at its time limit (TIMEOUT): ask
	// for half as much again if the work needs it, or checkpoint.
	HintTimedOut = "timed_out"
	// HintHostMemory: Slurm ended the job OUT_OF_MEMORY: ask for more host
	// memory.
	HintHostMemory = "host_memory"
	// HintStageData: IO-bound (the bottleneck rule): copy the input to
	// node-local storage first.
	HintStageData = "stage_data"
)

// LimitMargin is how much longer than the last run the suggested time
// limit is, and limitStep what it is rounded up to (SuggestedLimit).
const (
	LimitMargin = 1.5
	limitStep   = 5 * time.Minute
)

// SuggestedLimit is the --time gpuprof suggests for a job that worked
// for run: run × LimitMargin, rounded up to 5 minutes. The time-limit
// hints and the idle-job notice's fix both take it.
func SuggestedLimit(run time.Duration) time.Duration {
	return roundUp(time.Duration(float64(run)*LimitMargin), limitStep)
}

// Hints returns the sbatch options (and script lines) the user should
// change when submitting j again, one per problem the job shows, in the
// order of the Hint* rule constants, without repeating an option. A job
// with nothing to change gets an empty, non-nil slice. The thresholds are
// c's, the same as Classify's and Diagnose's. types are the GPU types of
// the job's cluster (GPUTypes of its inventory; nil when none is known):
// the smaller_gpu hint names one of them, and is never given without.
//
// GPU counts go per node (--gres) for a job on one node and per job
// (--gpus) for a job on several. When both unused_gpus and larger_gpu
// fire, the larger_gpu option carries the reduced count, so it replaces
// the unused_gpus one.
//
// The hints are tried here in the order of the Hint* constants, which is
// their printed order, each one guarded add over the same metrics, GPUs
// used and compute measure (a hinter carries them to the longer ones,
// unusedGPUs and smallerShare), and add drops an option a hint before
// gave already.
func Hints(j Job, c Config, types []GPUType) []Hint {
	var m Metrics
	measure(&j, &c, &m)
	out := []Hint{}
	add := func(rule, option, why string) {
		for _, h := range out {
			if option != "" && h.Option == option {
				return
			}
		}
		out = append(out, Hint{Option: option, Why: why, Rule: rule})
	}

	nodes := nodeCount(&j)
	vramBound := m.VRAMPeakValid && m.VRAMPeakFrac >= c.Bottlenecks.VRAMBoundFrac
	used := gpusUsed(m.GPUs, m.UnusedGPUs, m.MemoryHeldGPUs, vramBound)
	// A shard job's readings are of its part of a GPU: counting whole GPUs
	// or shards of shards makes no sense there.
	whole := j.ReqShards == 0 && !m.Shared

	// What the job's kernels did: SM activity where GPM measured it, else
	// the duty cycle, said as such.
	did := computeNote(&m)
	h := hinter{j: &j, m: &m, c: &c, nodes: nodes, used: used, vramBound: vramBound, whole: whole, did: did, add: add}
	h.unusedGPUs()
	rc := &c.Recommend
	h.smallerShare(types)

	if vramBound {
		n := used // at least one: gpusUsed counts the GPU whose memory filled
		on := ""
		if m.VRAMModel != "" {
			on = " on " + m.VRAMModel
		}
		add(HintLargerGPU, gpuOption("<type>", n, nodes),
			fmt.Sprintf("GPU memory peaked at %s of %s (%s)%s: replace <type> with a GPU type with more than %s (sinfo -o \"%%P %%G\" lists them), or reduce the batch size.",
				present.GiB(m.VRAMPeak)+" GiB", present.GiB(m.VRAMCard)+" GiB", present.Share(m.VRAMPeakFrac), on, present.GiB(m.VRAMCard)+" GiB"))
	}

	if m.Preallocated {
		res := present.Share(m.VRAMReservedFrac)
		add(HintGrowMemory, "export TF_FORCE_GPU_ALLOW_GROWTH=true",
			fmt.Sprintf("A framework reserved %s of the GPU memory at start, so the job's real need is unknown: for TensorFlow, this lets memory grow with use.", res))
		add(HintGrowMemory, "export XLA_PYTHON_CLIENT_PREALLOCATE=false",
			fmt.Sprintf("A framework reserved %s of the GPU memory at start, so the job's real need is unknown: for JAX, this stops the up-front reservation.", res))
	}

	if j.State == slurmext.StateCompleted && j.TimeLimit > 0 && !j.Unlimited && m.ElapsedValid && m.Elapsed > 0 &&
		m.Elapsed >= c.Summary.LimitMinRun.D() {
		ratio := j.TimeLimit.Seconds() / m.Elapsed.Seconds()
		want := SuggestedLimit(m.Elapsed)
		if ratio >= rc.OverRequestRatio && want < j.TimeLimit {
			add(HintTimeLimit, "--time="+slurmTime(want),
				fmt.Sprintf("It ran %s of its %s limit (the limit was %s the run): %s is %s the run rounded up, and a shorter limit lets the scheduler start it sooner.",
					present.Duration(m.Elapsed), present.Duration(j.TimeLimit), present.Times(ratio), present.Duration(want), present.Times(LimitMargin)))
		}
	}

	if j.State == slurmext.StateTimeout && j.TimeLimit > 0 && !j.Unlimited {
		want := SuggestedLimit(j.TimeLimit)
		add(HintTimedOut, "--time="+slurmTime(want),
			fmt.Sprintf("Slurm stopped it at its %s limit (TIMEOUT): if the work needs longer, ask for %s the limit; better, save checkpoints and resume (sbatch --requeue, --signal=B:USR1@300 to be warned 5 minutes before the end).",
				present.Duration(j.TimeLimit), present.Times(LimitMargin)))
	}

	if j.State == slurmext.StateOutOfMemory {
		add(HintHostMemory, "--mem=<size>",
			"Slurm stopped the job at its host-memory limit (OUT_OF_MEMORY, not GPU memory): set <size> above this run's request (sacct -j <job> -o ReqMem,MaxRSS shows the request and the peak).")
	}

	if ioBound(&m, &c) {
		add(HintStageData, "",
			fmt.Sprintf("It waited on storage %s of its time while the GPUs averaged %s: copy the input to node-local disk ($TMPDIR or /local) at the start of the job and read it from there.",
				present.Share(m.IOWait), formatPercent(m.UtilMean)))
	}
	return out
}

// hinter is what the hints of one job read, computed once by Hints: its
// measured metrics, the nodes and GPUs it used and what its kernels did;
// add appends a hint unless one before gave its option already.
type hinter struct {
	j         *Job
	m         *Metrics
	c         *Config
	nodes     int  // the nodes it ran on
	used      int  // the GPUs it used (gpusUsed)
	vramBound bool // a GPU's memory filled
	whole     bool // it held whole GPUs, not shards
	did       string
	add       func(rule, option, why string)
}

// unusedGPUs is the unused_gpus hint: ask for the GPUs it used, or for
// none (a CPU partition) where it used none; a quiet GPU whose memory the
// job held or filled counts as used, and the hint says why.
func (h hinter) unusedGPUs() {
	j, m, c, used, nodes, vramBound, whole, did, add := h.j, h.m, h.c, h.used, h.nodes, h.vramBound, h.whole, h.did, h.add
	if whole && m.UnusedGPUs > 0 && m.GPUs > 0 && used < m.GPUs {
		idle := fmt.Sprintf("mean utilisation below %s or never touched", formatPercent(c.Classes.IdleUtilMax))
		quiet := idle
		if did != "" {
			quiet += "; " + did
		}
		switch {
		case used == 0:
			add(HintUnusedGPUs, "",
				fmt.Sprintf("%s (%s): submit it without --gres=gpu or --gpus, to a CPU partition.", noneUsed(m.GPUs), quiet))
		case used > m.GPUs-m.UnusedGPUs && vramBound:
			// Every GPU was quiet, but one's memory was full: it was used.
			add(HintUnusedGPUs, gpuOption(j.ReqGPUType, used, nodes),
				fmt.Sprintf("%s quiet (%s), but GPU memory peaked at %s of a card: ask for the %d whose memory it used.",
					allQuiet(m.GPUs), quiet, present.Share(m.VRAMPeakFrac), used))
		case used > m.GPUs-m.UnusedGPUs:
			// Every GPU was quiet, but it held GPU memory: a program that
			// allocates GPU memory fails without a GPU.
			add(HintUnusedGPUs, gpuOption(j.ReqGPUType, used, nodes),
				fmt.Sprintf("%s quiet (%s), but it held GPU memory (peak %s of a card), and a program that allocates GPU memory fails without a GPU: it used %d of its %s, so ask for %d.",
					allQuiet(m.GPUs), quiet, present.Share(m.VRAMPeakFrac), used, present.Count(m.GPUs, "GPU", "GPUs"), used))
		default:
			add(HintUnusedGPUs, gpuOption(j.ReqGPUType, used, nodes),
				fmt.Sprintf("%d of the %d GPUs were unused (%s): it used %d of its %d GPUs, so ask for %d.", m.UnusedGPUs, m.GPUs, idle, used, m.GPUs, used))
		}
	}
}

// smallerShare is the hints for a job that barely computed and whose
// memory peak fits less than it held: a shard of one GPU, and a smaller
// GPU type of the cluster.
func (h hinter) smallerShare(types []GPUType) {
	m, c, used, nodes, vramBound, whole, did, add := h.m, h.c, h.used, h.nodes, h.vramBound, h.whole, h.did, h.add
	rc := &c.Recommend
	// A shard of one GPU: a single-GPU job, or one whose GPUs were all
	// quiet and that held memory on one (what it used, above), whose
	// memory peak fits a shard by the sharing rule (fitsShard) and whose
	// GPUs were barely used by the compute measure the sharing rule reads
	// (SM activity where GPM measured it, else the duty cycle). Full
	// memory asks for a larger GPU below: never also for a shard.
	compute, _, computeOK := m.Compute()
	oneUsed := used == 1 && nodes == 1 && (m.GPUs == 1 || m.UnusedGPUs == m.GPUs)
	if whole && oneUsed && !vramBound && m.VRAMPeakValid && m.VRAMPeakBytesValid && !m.Preallocated &&
		fitsShard(m.VRAMPeak, m.VRAMCard, rc) && computeOK && compute < c.Classes.LowUtilMax {
		add(HintShard, "--gres=shard:1",
			fmt.Sprintf("It used %s of the %s GPU memory (%s) and barely used its GPU (%s): if this cluster offers GPU shards (gres/shard), a shard instead of a whole GPU leaves the rest to others.",
				present.GiB(m.VRAMPeak)+" GiB", present.GiB(m.VRAMCard)+" GiB", present.Share(m.VRAMPeakFrac), did))
	}

	// A smaller GPU type: the same compute measure as the shard hint, on
	// the GPUs it used, and a peak that fits a smaller card of the
	// cluster with the sharing rule's margin (fitsCard).
	if whole && used > 0 && !vramBound && m.VRAMPeakValid && m.VRAMPeakBytesValid && !m.Preallocated &&
		computeOK && compute < c.Classes.LowUtilMax {
		if t, ok := smallerType(m, types, c); ok {
			its := "its card"
			if m.VRAMModel != "" {
				its = "its " + m.VRAMModel
			}
			gpus := "its GPU"
			if m.GPUs > 1 {
				gpus = "its GPUs"
			}
			add(HintSmallerGPU, gpuOption(t.Type, used, nodes),
				fmt.Sprintf("GPU memory peaked at %s of the %s of %s and it barely used %s (%s): type %s (%s, %s per GPU) is the smallest GPU type of this cluster that holds that peak with the %s margin, and leaves the larger card to jobs that need it.",
					present.GiB(m.VRAMPeak)+" GiB", present.GiB(m.VRAMCard)+" GiB", its, gpus, did, t.Type, t.Model, present.GiB(t.Memory)+" GiB", present.Times(c.Recommend.SharingMargin)))
		}
	}
}

// GPUType is a GPU type of a cluster, as a job asks for it.
type GPUType struct {
	// Type is the GRES type jobs name (--gres=gpu:<Type>:N): GRESType of
	// the model.
	Type string `json:"type"`
	// Model is the NVML name of the type's model with the least memory,
	// and Memory that model's memory per GPU in bytes: a job asking for
	// the type may get any of its models.
	Model  string `json:"model"`
	Memory uint64 `json:"memory"`
}

// GPUTypes returns the GPU types of an inventory (Input.Nodes), one per
// GRES type, smallest memory first (ties by type). Only nodes with GPUs
// and a known card size count (a node known from slurm.conf alone has
// none), and only models with a type of their own (GRESType gives "gpu"
// for a name it cannot read a type from). nil when none is left: the
// hints then name no GPU type.
func GPUTypes(nodes []Node) []GPUType {
	byType := map[string]GPUType{}
	for _, n := range nodes {
		if n.GPUs <= 0 || n.MemoryTotal == 0 || n.GPUModel == "" {
			continue
		}
		typ := GRESType(n.GPUModel)
		if typ == "gpu" {
			continue
		}
		t, seen := byType[typ]
		if !seen || n.MemoryTotal < t.Memory || n.MemoryTotal == t.Memory && n.GPUModel < t.Model {
			byType[typ] = GPUType{Type: typ, Model: n.GPUModel, Memory: n.MemoryTotal}
		}
	}
	if len(byType) == 0 {
		return nil
	}
	out := make([]GPUType, 0, len(byType))
	for _, t := range byType {
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b GPUType) int { return cmp.Or(cmp.Compare(a.Memory, b.Memory), cmp.Compare(a.Type, b.Type)) })
	return out
}

// smallerType is the smallest GPU type of types whose card is smaller
// than the one the job's memory peak was on (m.VRAMCard), of another
// type than that card's, and holds the peak by fitsCard.
func smallerType(m *Metrics, types []GPUType, c *Config) (GPUType, bool) {
	own := ""
	if m.VRAMModel != "" {
		own = GRESType(m.VRAMModel)
	}
	best, found := GPUType{}, false
	for _, t := range types {
		if t.Type == own || t.Type == "gpu" || !validName(t.Type) || t.Memory >= m.VRAMCard || !fitsCard(m.VRAMPeak, t.Memory, c) {
			continue
		}
		if !found || t.Memory < best.Memory || t.Memory == best.Memory && t.Type < best.Type {
			best, found = t, true
		}
	}
	return best, found
}

// fitsCard is whether a job whose GPU memory peaked at peak bytes fits a
// card of card bytes: its need with the sharing rule's margin
// (needWithMargin, recommend.sharing_margin) is at most the card, and
// the peak stays below bottlenecks.vram_bound_frac of it, so that the
// larger_gpu rule would not send it back.
func fitsCard(peak, card uint64, c *Config) bool {
	return card > 0 && needWithMargin(float64(peak), &c.Recommend) <= card &&
		float64(peak) < c.Bottlenecks.VRAMBoundFrac*float64(card)
}

// computeNote says what a job's kernels did, by the compute measure
// (Metrics.Compute): with SM activity, whether they computed at all ("SM
// activity 0 %: its kernels did no measurable work", "SM activity
// 35 %"); with the duty cycle alone, that and that SM activity was not
// measured. Below 0.1 % the kernels "barely used the SMs". Empty when
// neither is known.
func computeNote(m *Metrics) string {
	const idleSM = 0.1 // percent
	v, measure, ok := m.Compute()
	switch {
	case !ok:
		return ""
	case measure == MetricSMMean && v < 0.005:
		return "SM activity " + formatActivity(v) + ": its kernels did no measurable work"
	case measure == MetricSMMean && v < idleSM:
		return "SM activity " + formatActivity(v) + ": its kernels barely used the SMs"
	case measure == MetricSMMean:
		return "SM activity " + formatActivity(v)
	}
	return "duty cycle " + formatPercent(v) + ", SM activity not measured: whether its kernels computed is unknown"
}

// gpusUsed is the GPUs a job used as every piece of advice counts them
// (Hints, the per-user recommendations): those held minus those unused
// (Metrics.UnusedGPUs), but at least one when a GPU's memory peaked at
// bottlenecks.vram_bound_frac of its card (vramBound, the vram_bound
// rule) or when it held GPU memory on an unused one (memHeld,
// Metrics.MemoryHeldGPUs): a job that held GPU memory needs a GPU,
// whatever its utilisation — a program that allocates GPU memory fails
// without one — and is never told to run without one. (Quiet GPUs beyond
// the first where it held memory still count unused: frameworks make a
// context, and so hold memory, on every GPU they see.)
func gpusUsed(held, unused, memHeld int, vramBound bool) int {
	used := max(held-unused, 0)
	if (vramBound || memHeld > 0) && used == 0 && held > 0 {
		used = 1
	}
	return used
}

// gpuOption asks for n GPUs of type typ ("" for any): per node with
// --gres on one node, per job with --gpus on several (--gres counts per
// node, and the job's GPUs need not be spread evenly).
func gpuOption(typ string, n, nodes int) string {
	if typ != "" && typ != "<type>" && !validName(typ) {
		typ = "" // not something to paste into a command line
	}
	count := strconv.Itoa(n)
	if typ != "" {
		count = typ + ":" + count
	}
	if nodes > 1 {
		return "--gpus=" + count
	}
	return "--gres=gpu:" + count
}

// nodeCount returns on how many nodes the job's GPUs were (1 when none
// says).
func nodeCount(j *Job) int {
	seen := map[string]bool{}
	for _, g := range j.GPUs {
		seen[g.Node] = true
	}
	return max(len(seen), 1)
}

// noneUsed says that none of a job's n GPUs was used, in the singular
// for one.
func noneUsed(n int) string {
	if n == 1 {
		return "Its one GPU was not used"
	}
	return fmt.Sprintf("None of the %d GPUs was used", n)
}

// allQuiet says that all of a job's n GPUs were quiet, in the singular
// for one.
func allQuiet(n int) string {
	if n == 1 {
		return "Its one GPU was"
	}
	return fmt.Sprintf("All %d GPUs were", n)
}
