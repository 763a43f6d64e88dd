package analysis

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/gpuprof/gpuprof/internal/present"
	"github.com/gpuprof/gpuprof/slurmext"
)

// Node is one GPU node of the cluster's inventory: the recommendations
// need it to write node and partition lines, the plan to know the GPUs
// there are now.
type Node struct {
	Name        string `json:"name"`
	GPUModel    string `json:"gpu_model"` // NVML name, e.g. "NVIDIA H100 80GB HBM3"
	GPUs        int    `json:"gpus"`
	MemoryTotal uint64 `json:"memory_total"` // bytes per GPU; 0 when unknown
	// Shards configured on the node (slurm.conf Gres=…,shard:N), 0 when
	// unknown or none: a shard job there holds shards ÷ (Shards / GPUs) of a
	// GPU.
	Shards int `json:"shards,omitempty"`
	// Partitions the node belongs to (optional).
	Partitions []string `json:"partitions,omitempty"`
}

// Config targets of ConfigLine.
const (
	TargetSlurmConf = "slurm.conf"
	TargetGresConf  = "gres.conf"
	TargetSacctmgr  = "sacctmgr"
	TargetScontrol  = "scontrol"
	TargetSbatch    = "sbatch"
)

// ConfigLine is one exact line of configuration: a slurm.conf or gres.conf
// line, a sacctmgr or scontrol command, or a line of a batch script.
type ConfigLine struct {
	Target string `json:"target"`
	Text   string `json:"text"`
}

// Recommendation kinds.
const (
	RecShards        = "gpu_shards"
	RecMPS           = "gpu_mps"
	RecMIG           = "gpu_mig"
	RecDebugPart     = "debug_partition"
	RecLongQOS       = "long_training_qos"
	RecUserLimits    = "qos_limits"
	RecDefaultTime   = "default_time"
	RecStorage       = "storage"
	RecIdleAccount   = "idle_account"
	RecUserGPUs      = "user_gpus"
	RecUserShard     = "user_shard"
	RecNoChange      = "no_change"
	sharedPartition  = "shared"
	sharedQOS        = "gpu-shared"
	debugPartition   = "debug"
	debugQOS         = "gpu-debug"
	longQOS          = "gpu-long"
	burstQOS         = "gpu-burst"
	defaultUserQOS   = "normal"
	debugPriorityTie = 10
)

// Recommendation is one change the data justifies, with its evidence, its
// expected effect, a confidence and the exact configuration.
type Recommendation struct {
	ID     string `json:"id"`
	Kind   string `json:"kind"`
	Title  string `json:"title"`
	Change string `json:"change"` // what to change, in plain words
	// Evidence are the numbers: jobs, users, shares of GPU-hours,
	// percentiles.
	Evidence []Reason `json:"evidence"`
	Effect   string   `json:"effect"` // expected effect
	// Confidence is (1 − e^(−n/n0)) · (1 − e^(−effect/threshold)): n the
	// jobs the rule rests on, n0 recommend.confidence_n0, effect the
	// measured quantity the rule compares and threshold the value at which
	// it fires. At the threshold with n = n0 it is 0.40; it nears 1 only
	// with many jobs and a large effect.
	Confidence     float64      `json:"confidence"`
	ConfidenceNote string       `json:"confidence_note"`
	Config         []ConfigLine `json:"config,omitempty"`
	// Simulated is the replayed effect of applying it, when
	// capacity.SimulatePlan ran (nil otherwise).
	Simulated *Effect `json:"simulated,omitempty"`

	// Replay is how capacity.SimulatePlan applies it (never written out).
	Replay *ReplaySpec `json:"-"`
}

// NoChange is a rule that looked at the data and found no change justified,
// with why: saying so is part of the answer.
type NoChange struct {
	Rule string `json:"rule"`
	Note string `json:"note"`
}

// Confidence returns (1 − e^(−n/n0)) · (1 − e^(−effect/threshold)), in
// [0, 1]; 0 for non-positive or non-finite inputs.
func Confidence(n int, n0, effect, threshold float64) float64 {
	if n <= 0 || !(n0 > 0) || !(threshold > 0) || !(effect > 0) || !finite(effect) {
		return 0
	}
	return (1 - math.Exp(-float64(n)/n0)) * (1 - math.Exp(-effect/threshold))
}

// jobFact is what the recommendations and the plan keep of one GPU job: a
// compact record (about 180 bytes), so a million jobs cost about 180 MB.
type jobFact struct {
	user, account, partition, name string
	model                          string
	card, need                     uint64 // bytes; need 0: unknown
	// cs and ce are the part of the run counted (Metrics.CountStart/End,
	// unix seconds; 0 none: a job still running counts up to the counting
	// end), share the GPUs held in GPU-equivalents (Metrics.GPUShare):
	// what every "GPUs held at once" counts. gpus are the whole GPUs, what
	// Slurm's per-user limits count.
	cs, ce int64
	share  float64
	// whole: the job held whole GPUs to itself (no shards, no other job
	// on them), so its GPUs can be counted used or unused, as the hints do.
	whole                bool
	elapsed, wait, limit float64
	gpuHours, util       float64
	// compute is how much of its GPUs the job used as the sharing rules
	// size it (Metrics.Compute): SM activity where GPM measured the job's
	// own (computeSM), else the duty cycle, util.
	compute                   float64
	computeSM                 bool
	gpus, unused, memHeld     int32
	cls                       Class
	kinds                     Kinds
	elapsedOK, waitOK, utilOK bool
	prealloc, limitOK         bool
	outcome                   Outcome
	idx                       int32 // index in the Input's Jobs
}

// facts is one pass over the jobs.
type facts struct {
	jobs     []jobFact
	gpuHours ExactSum // the same in every order of the jobs
	seen     int32    // jobs offered to add, GPU or not: the next one's index
}

func collect(in *Input, c *Config) (*facts, *counter) {
	f := newFacts(len(in.Jobs))
	k := newCounter(in, c.Counting.shardsPerGPU())
	var m Metrics
	for i := range in.Jobs {
		j := &in.Jobs[i]
		measure(j, c, &m)
		k.count(j, &m)
		if !k.touches(j, &m) {
			f.skip() // not the window's job
			continue
		}
		f.add(j, &m, classify(j, &m, c, nil), diagnose(j, &m, c, nil))
	}
	return f, k
}

func newFacts(n int) *facts {
	return &facts{jobs: make([]jobFact, 0, n)}
}

// skip keeps the place of a job that is in no fact (not the window's).
func (f *facts) skip() { f.seen++ }

// add keeps the record of one job measured, classified and diagnosed by the
// caller (Analyse does it once for all its parts).
func (f *facts) add(j *Job, m *Metrics, cls Class, kinds Kinds) {
	idx := f.seen
	f.seen++
	if m.GPUs == 0 {
		return // CPU jobs say nothing about GPUs
	}
	jf := jobFact{
		user: j.User, account: j.Account, partition: j.Partition, name: j.Name,
		elapsed: m.Elapsed.Seconds(), elapsedOK: m.ElapsedValid,
		wait: m.Wait.Seconds(), waitOK: m.WaitValid,
		gpuHours: m.GPUHours, util: m.UtilMean, utilOK: m.UtilMeanValid,
		gpus: int32(m.GPUs), unused: int32(m.UnusedGPUs), memHeld: int32(m.MemoryHeldGPUs),
		cls: cls, kinds: kinds, outcome: m.Outcome,
		prealloc: m.Preallocated, idx: idx,
	}
	jf.share = m.GPUShare
	var measure Metric
	jf.compute, measure, _ = m.Compute()
	jf.computeSM = measure == MetricSMMean
	jf.whole = j.ReqShards == 0 && !m.Shared
	if !m.CountStart.IsZero() {
		jf.cs, jf.ce = m.CountStart.Unix(), m.CountEnd.Unix()
	}
	if j.TimeLimit > 0 && !j.Unlimited {
		jf.limit, jf.limitOK = j.TimeLimit.Seconds(), true
	}
	jf.model, jf.card, jf.need = vramNeed(j, m)
	f.gpuHours.Add(m.GPUHours)
	f.jobs = append(f.jobs, jf)
}

// vramNeed returns the card and the memory a job needed on its fullest
// GPU. A peak that a framework preallocated says what was reserved, not
// needed: then the measured floor counts when it is below the reservation
// (the framework grew into less than it took), else the need is unknown
// (0).
func vramNeed(j *Job, m *Metrics) (model string, card, need uint64) {
	if m.VRAMPeakBytesValid && m.VRAMCard > 0 {
		model, card, need = m.VRAMModel, m.VRAMCard, m.VRAMPeak
	}
	for i := range j.GPUs {
		g := &j.GPUs[i]
		if model == "" && g.Model != "" {
			model, card = g.Model, g.MemoryTotal
		}
		if !g.Preallocated || !g.VRAMPeakValid || g.MemoryTotal == 0 || g.VRAMPeak > g.MemoryTotal {
			continue
		}
		if g.VRAMFloorValid && g.VRAMFloor > 0 && g.VRAMFloor < g.VRAMPeak*9/10 {
			need = max(need, g.VRAMFloor)
		} else {
			return g.Model, g.MemoryTotal, 0
		}
	}
	return model, card, need
}

// Recommend derives the recommendations the data justifies, and the rules
// that found nothing to change. findings must be Analyse's for the same
// input (the summary's time-limit ratios are reused).
func Recommend(in Input, findings Findings, c Config) ([]Recommendation, []NoChange, error) {
	if err := c.Validate(); err != nil {
		return nil, nil, err
	}
	f, _ := collect(&in, &c)
	r := recommend(&in, f, &findings, &c)
	return r.recs, r.none, nil
}

type recBuilder struct {
	recs []Recommendation
	none []NoChange
	c    *Config
}

func (b *recBuilder) add(r Recommendation, n int, effect, threshold float64) {
	r.ID = fmt.Sprintf("R%d", len(b.recs)+1)
	r.Confidence = math.Round(Confidence(n, b.c.Recommend.ConfidenceN0, effect, threshold)*100) / 100
	r.ConfidenceNote = fmt.Sprintf("%d jobs; effect %s of the %s threshold", n,
		present.Times(effect/threshold), present.Decimal(threshold))
	if n < 2*b.c.Recommend.MinJobs {
		r.ConfidenceNote += "; small sample"
	}
	b.recs = append(b.recs, r)
}

func (b *recBuilder) nothing(rule, format string, args ...any) {
	b.none = append(b.none, NoChange{Rule: rule, Note: fmt.Sprintf(format, args...)})
}

func recommend(in *Input, f *facts, fd *Findings, c *Config) *recBuilder {
	b := &recBuilder{c: c}
	if len(f.jobs) == 0 {
		b.nothing("all", "no GPU jobs: nothing to base a change on")
		return b
	}
	sharedModels := recommendSharing(b, in, f)
	recommendDebug(b, in, f)
	recommendLong(b, in, f)
	recommendLimits(b, in, f)
	recommendDefaultTime(b, f, fd)
	recommendStorage(b, f)
	recommendIdleAccounts(b, f)
	recommendUsers(b, f, sharedModels)
	return b
}

// sortedStrings returns the keys of m, sorted.
func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// slurmTime formats a duration as Slurm accepts it: HH:MM:SS, or
// D-HH:MM:SS from a day on (slurmext's one rule).
func slurmTime(d time.Duration) string { return slurmext.FormatDuration(d, false) }

// roundUp rounds d up to a multiple of step (at least one step).
func roundUp(d, step time.Duration) time.Duration {
	if d <= step {
		return step
	}
	return (d + step - 1) / step * step
}

// nodeList returns the names of the nodes, or "ALL" when none are known
// by name: Slurm accepts a comma-separated list.
func nodeList(nodes []Node) string {
	names := make([]string, 0, len(nodes))
	for _, n := range nodes {
		if validName(n.Name) {
			names = append(names, n.Name)
		}
	}
	if len(names) == 0 {
		return "ALL"
	}
	slices.Sort(names)
	return strings.Join(slices.Compact(names), ",")
}

// validName reports whether s can stand unquoted in a Slurm line.
func validName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

// TotalGPUs is the GPUs of the nodes (a negative count as none).
func TotalGPUs(nodes []Node) int {
	n := 0
	for _, nd := range nodes {
		n += max(nd.GPUs, 0)
	}
	return n
}
