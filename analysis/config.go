package analysis

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/gpuprof/gpuprof/config"
)

// ErrConfig marks an invalid analysis configuration.
var ErrConfig = errors.New("invalid analysis configuration")

// Duration is a time.Duration written as "30m" or "4h" in TOML; the same
// type as the main configuration file's.
type Duration = config.Duration

// Config holds every threshold of the rules, grouped as in the TOML file
// (docs/analysis.md describes each rule). Later steps (recommendations, the
// capacity plan) add their own sections.
type Config struct {
	Classes     ClassConfig      `toml:"classes"`
	Bottlenecks BottleneckConfig `toml:"bottlenecks"`
	Summary     SummaryConfig    `toml:"summary"`
	Recommend   RecommendConfig  `toml:"recommend"`
	Plan        PlanConfig       `toml:"plan"`
	Counting    CountingConfig   `toml:"counting"`
}

// CountingConfig holds the assumptions of the one rule for counting GPU
// time (counter).
type CountingConfig struct {
	// ShardsPerGPU is assumed for a shard job whose node's shard count is
	// not in the inventory (slurm.conf's NodeName … Gres=gpu:N,shard:M
	// gives M/N); DefaultShardsPerGPU by default, 0 means that too.
	// Outputs say when it was used.
	ShardsPerGPU int `toml:"shards_per_gpu"`
}

func (c CountingConfig) shardsPerGPU() int {
	if c.ShardsPerGPU > 0 {
		return c.ShardsPerGPU
	}
	return DefaultShardsPerGPU
}

// RecommendConfig holds the thresholds of the recommendation rules
// (Recommend). A rule that does not fire gives no recommendation.
type RecommendConfig struct {
	// MinJobs: no cluster-level recommendation rests on fewer jobs.
	MinJobs int `toml:"min_jobs"`
	// MinUserJobs: no per-user or per-account note rests on fewer jobs.
	MinUserJobs int `toml:"min_user_jobs"`
	// ConfidenceN0: the sample size at which the size factor of the
	// confidence reaches 1 − 1/e (confidence = (1 − e^(−n/n0)) ·
	// (1 − e^(−effect/threshold))).
	ConfidenceN0 float64 `toml:"confidence_n0"`
	// SharingVRAMMax: a single-GPU job whose memory need is at most this
	// fraction of the card, with mean utilisation below classes.low_util_max,
	// is a candidate for a shared GPU.
	SharingVRAMMax float64 `toml:"sharing_vram_max"`
	// SharingShareMin: sharing is recommended for a GPU model when the
	// candidates hold at least this share of the model's GPU-hours.
	SharingShareMin float64 `toml:"sharing_share_min"`
	// SharingMargin multiplies the candidates' p95 memory need before the
	// card is divided by it.
	SharingMargin float64 `toml:"sharing_margin"`
	// MaxShards caps the shards per GPU.
	MaxShards int `toml:"max_shards"`
	// MPSUtilMin (percent): MPS is added when the candidates' median mean
	// utilisation is at least this (they compute enough to contend for SMs).
	MPSUtilMin float64 `toml:"mps_util_min"`
	// OverRequestRatio: a partition whose median requested limit / run
	// time is at least this gets a DefaultTime.
	OverRequestRatio float64 `toml:"over_request_ratio"`
	// IOShareMin: storage is named when IO-bound jobs hold at least this
	// share of the GPU-hours.
	IOShareMin float64 `toml:"io_share_min"`
	// IdleShareMin: an account is named when idle allocations hold at
	// least this share of its GPU-hours.
	IdleShareMin float64 `toml:"idle_share_min"`
	// LongGrpFrac: the long-training QOS may hold at most this fraction of
	// the cluster's GPUs (GrpTRES); it is recommended when long training
	// was seen holding more.
	LongGrpFrac float64 `toml:"long_grp_frac"`
	// QueueShareMin: per-user limits and the burst reserve are recommended
	// when queue-bound jobs are at least this share of the GPU jobs.
	QueueShareMin float64 `toml:"queue_share_min"`
	// UserShareMax: the per-user GPU limit is at least this fraction of
	// the GPUs (and at least the median user's peak).
	UserShareMax float64 `toml:"user_share_max"`
	// BurstFrac: the deadline-burst QOS may hold this fraction of the GPUs.
	BurstFrac float64 `toml:"burst_frac"`
}

// PlanConfig holds the defaults of the capacity plan (Plan) and the
// thresholds of its verdict.
type PlanConfig struct {
	// Growth is the demand growth per year (0.3 = 30 %). The report
	// and gpuprof plan use it only when GrowthSet, or when too few whole
	// months are held to estimate the site's own trend, or the trend is
	// too uncertain to plan on (GrowthOf, GrowthUsable).
	Growth float64 `toml:"growth"`
	// GrowthSet is set when the configuration file sets plan.growth (or
	// a caller's --growth did).
	GrowthSet bool `toml:"-"`
	// ModelGrowth is the growth per year of each GPU model whose own
	// trend the horizon applies instead of Growth (ModelGrowthUsed of
	// GrowthOf's estimate); set by the report and gpuprof plan, never
	// by the configuration file.
	ModelGrowth map[string]float64 `toml:"-"`
	// HorizonMonths is how far ahead the plan looks.
	HorizonMonths int `toml:"horizon_months"`
	// NewDemand is demand in GPUs expected from new projects.
	NewDemand float64 `toml:"new_demand"`
	// Headroom is the fraction of every GPU kept free for peaks:
	// Q_safe = 1 − headroom.
	Headroom float64 `toml:"headroom"`
	// VRAMShareMin: GPUs with more memory are the constraint when
	// VRAM-bound jobs hold at least this share of the GPU-hours.
	VRAMShareMin float64 `toml:"vram_share_min"`
	// IOShareMin: storage bandwidth is a constraint at this share of
	// IO-bound GPU-hours.
	IOShareMin float64 `toml:"io_share_min"`
	// WasteShareMin: scheduling policy is a constraint when idle
	// allocations and unused GPUs hold at least this share.
	WasteShareMin float64 `toml:"waste_share_min"`

	// The simulated plan (capacity.SimulatePlan, docs/whatif.md).
	//
	// TargetP95Wait is the queue wait the plan keeps every partition and
	// GPU model under, at the 95th percentile of the replayed waits.
	TargetP95Wait Duration `toml:"target_p95_wait"`
	// LeadTimeMonths is the procurement lead time: the order-by date is
	// this many months before growth first breaks the target.
	LeadTimeMonths int `toml:"lead_time_months"`
	// MinWindow and MinJobs are the least data a plan is made from; below
	// either the verdict is insufficient_data.
	MinWindow Duration `toml:"min_window"`
	MinJobs   int      `toml:"min_jobs"`
	// Seeds is how many seeded replays each simulated answer spreads over.
	Seeds int `toml:"seeds"`
	// MaxPurchase is the most GPUs of one model the purchase search
	// tries; 0 (the default): as many as the model has, at least 32 —
	// the search scales with the cluster.
	MaxPurchase int `toml:"max_purchase"`
	// ReplayBudget caps the work of one plan in replayed jobs (jobs ×
	// replays); a month too large for it gets fewer seeds, then no
	// simulation, said so.
	ReplayBudget int `toml:"replay_budget"`
	// StepBudget caps the plan's scheduler steps (events, and jobs the
	// backfill cycles tested): a deep queue costs far more per job. Past
	// it the plan stops, and says it is not simulated. The defaults
	// (20,000,000 replayed jobs, 500,000,000 steps) let a 250,000-job
	// month on 1,000 GPUs be planned, in about 2–4 minutes on two cores
	// (docs/benchmarks.md, "Capacity plan on the replay").
	StepBudget int `toml:"step_budget"`
	// DepreciationYears spreads a purchase price over its years of use.
	DepreciationYears float64 `toml:"depreciation_years"`
	// Prices, per GPU model, enable the buy-versus-rent table.
	Prices []PriceConfig `toml:"prices"`
}

// Replayable reports whether a window of n jobs can be replayed within
// ReplayBudget at all: the least plan (today, the horizon, the free
// changes, one size per model, the timeline's two ends) takes about six
// replays. Callers that read the records skip what only a replay needs
// when it cannot.
func (p PlanConfig) Replayable(n int) bool { return n*(5+1) <= p.ReplayBudget }

// PriceConfig is what one GPU of a model costs to own and to rent:
// Model is matched as --add matches it (GRES type or a word of the model
// name), Purchase the price of one GPU (with its share of the server),
// RunningPerYear its power, cooling and support per year, and
// CloudPerGPUHour what a cloud charges for one such GPU an hour. One
// currency throughout.
type PriceConfig struct {
	Model           string  `toml:"model"`
	Purchase        float64 `toml:"purchase"`
	RunningPerYear  float64 `toml:"running_per_year"`
	CloudPerGPUHour float64 `toml:"cloud_per_gpu_hour"`
}

// ClassConfig holds the thresholds of the class rules (Classify).
type ClassConfig struct {
	// ShortJobMax: a job that is not an array task and ran less than this
	// is short debugging / interactive work.
	ShortJobMax Duration `toml:"short_job_max"`
	// LongTrainingMin: a job that ran at least this long with a mean
	// utilisation of at least LowUtilMax is long training.
	LongTrainingMin Duration `toml:"long_training_min"`
	// IdleUtilMax (percent): a job whose mean utilisation over all its GPUs
	// is below this holds GPUs it hardly uses (idle allocation); a single
	// GPU below it counts as unused.
	IdleUtilMax float64 `toml:"idle_util_max"`
	// LowUtilMax (percent): mean utilisation below this is low. It bounds
	// long training from below, and IO-bound and service work from above.
	LowUtilMax float64 `toml:"low_util_max"`
	// ServiceMinDuration: an inference service or other long-lived server
	// runs at least this long.
	ServiceMinDuration Duration `toml:"service_min_duration"`
	// ServiceSteadyMin: a service's memory floor is at least this fraction
	// of its peak (a model loaded once and kept). Where the floor was not
	// measured (no time series) the rule goes by duration and utilisation
	// alone and says so.
	ServiceSteadyMin float64 `toml:"service_steady_min"`
	// ServiceBurstSpread (percentage points): utilisation p95 − p50 at
	// least this wide is bursty, the pattern of a server answering
	// requests; a service is bursty or below LowUtilMax.
	ServiceBurstSpread float64 `toml:"service_burst_spread"`
	// InteractiveNames are job names (compared case-insensitively) that
	// mark interactive sessions: srun --pty bash, salloc, notebook
	// spawners. Such jobs are short debugging / interactive work at any
	// length, unless they left their GPUs idle.
	InteractiveNames []string `toml:"interactive_names"`
}

// BottleneckConfig holds the thresholds of the bottleneck rules (Diagnose).
type BottleneckConfig struct {
	// VRAMBoundFrac: a GPU whose memory peak reached this fraction of the
	// card is VRAM-bound, unless a framework preallocated the memory (then
	// the peak says nothing about the need).
	VRAMBoundFrac float64 `toml:"vram_bound_frac"`
	// ComputeBoundUtil (percent): a median utilisation (mean over the
	// job's GPUs of each GPU's median) at or above this is compute-bound;
	// where GPM measured the job's SM activity, its mean at or above this
	// instead (Metrics.Compute).
	ComputeBoundUtil float64 `toml:"compute_bound_util"`
	// LowSMUtilMin (percent) and LowSMRatio: a job whose mean duty cycle
	// is at least LowSMUtilMin while its mean SM activity (GPM) is below
	// LowSMRatio × the duty cycle keeps the GPU nominally busy with
	// kernels that use few of its SMs (low_sm_activity).
	LowSMUtilMin float64 `toml:"low_sm_util_min"`
	LowSMRatio   float64 `toml:"low_sm_ratio"`
	// IOBoundFrac: an IO-wait fraction of wall time at or above this,
	// while mean GPU utilisation is below classes.low_util_max, is
	// IO-bound.
	IOBoundFrac float64 `toml:"io_bound_frac"`
	// IONodeScope: accept IO wait measured node-wide (no cgroup or
	// per-process reading). On nodes that run one job at a time it is the
	// job's; on shared nodes it includes the neighbours' IO.
	IONodeScope bool `toml:"io_node_scope"`
	// QueueBoundRatio: a job that waited at least this many times its run
	// time is queue-bound…
	QueueBoundRatio float64 `toml:"queue_bound_ratio"`
	// QueueBoundMinWait: …provided it waited at least this long (a
	// ten-second job that waited a minute is not a queueing problem).
	QueueBoundMinWait Duration `toml:"queue_bound_min_wait"`
}

// SummaryConfig holds the settings of the cluster summary (Summarise).
type SummaryConfig struct {
	// LimitMinRun: jobs that ran less than this do not count in the
	// time-limit accuracy (requested limit / run time), where a crash after
	// seconds would read as a thousandfold over-request.
	LimitMinRun Duration `toml:"limit_min_run"`
}

// DefaultConfig returns the defaults documented in docs/analysis.md and
// contrib/analysis.toml.example.
func DefaultConfig() Config {
	return Config{
		Classes: ClassConfig{
			ShortJobMax:        Duration(30 * time.Minute),
			LongTrainingMin:    Duration(4 * time.Hour),
			IdleUtilMax:        5,
			LowUtilMax:         30,
			ServiceMinDuration: Duration(4 * time.Hour),
			ServiceSteadyMin:   0.8,
			ServiceBurstSpread: 40,
			InteractiveNames: []string{
				"bash", "sh", "zsh", "interactive", "jupyter", "jupyterlab",
				"spawner-jupyterhub", "code-server",
			},
		},
		Bottlenecks: BottleneckConfig{
			VRAMBoundFrac:     0.9,
			ComputeBoundUtil:  80,
			LowSMUtilMin:      10,
			LowSMRatio:        0.25,
			IOBoundFrac:       0.2,
			IONodeScope:       true,
			QueueBoundRatio:   4,
			QueueBoundMinWait: Duration(15 * time.Minute),
		},
		Summary: SummaryConfig{
			LimitMinRun: Duration(time.Minute),
		},
		Recommend: RecommendConfig{
			MinJobs:          20,
			MinUserJobs:      5,
			ConfidenceN0:     50,
			SharingVRAMMax:   0.25,
			SharingShareMin:  0.2,
			SharingMargin:    1.2,
			MaxShards:        8,
			MPSUtilMin:       10,
			OverRequestRatio: 5,
			IOShareMin:       0.1,
			IdleShareMin:     0.2,
			LongGrpFrac:      0.75,
			QueueShareMin:    0.1,
			UserShareMax:     0.5,
			BurstFrac:        0.1,
		},
		Counting: CountingConfig{ShardsPerGPU: DefaultShardsPerGPU},
		Plan: PlanConfig{
			Growth:        0.3,
			HorizonMonths: 12,
			NewDemand:     0,
			Headroom:      0.2,
			VRAMShareMin:  0.2,
			IOShareMin:    0.1,
			WasteShareMin: 0.2,

			TargetP95Wait:     Duration(time.Hour),
			LeadTimeMonths:    3,
			MinWindow:         Duration(7 * 24 * time.Hour),
			MinJobs:           50,
			Seeds:             5,
			MaxPurchase:       0,
			ReplayBudget:      20_000_000,
			StepBudget:        500_000_000,
			DepreciationYears: 5,
		},
	}
}

// ParseConfig decodes a TOML document over the defaults and validates the
// result. name is used in error messages. Unknown keys are errors (a
// misspelt threshold must not silently keep its default). Errors wrap
// ErrConfig.
func ParseConfig(data []byte, name string) (Config, error) {
	c := DefaultConfig()
	md, err := toml.Decode(string(data), &c)
	if err != nil {
		return c, fmt.Errorf("%w: %s: %v", ErrConfig, name, err)
	}
	if undec := md.Undecoded(); len(undec) > 0 {
		return c, fmt.Errorf("%w: %s: unknown key %q", ErrConfig, name, undec[0].String())
	}
	c.Plan.GrowthSet = md.IsDefined("plan", "growth")
	if err := c.Validate(); err != nil {
		return c, fmt.Errorf("%s: %w", name, err)
	}
	return c, nil
}

// LoadConfig reads the TOML file at path over the defaults (see
// ParseConfig). It is the package's only I/O; callers that already hold the
// bytes use ParseConfig.
func LoadConfig(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return DefaultConfig(), fmt.Errorf("read analysis config: %w", err)
	}
	return ParseConfig(data, path)
}

// ConfigAt is the analysis configuration a command's --analysis-config
// (or --config) names: the defaults when path is "", else the file over
// them (LoadConfig).
func ConfigAt(path string) (Config, error) {
	if path == "" {
		return DefaultConfig(), nil
	}
	return LoadConfig(path)
}

// Validate checks that the thresholds are in range and consistent with one
// another. Errors wrap ErrConfig and name the key.
func (c Config) Validate() error {
	cl, b := c.Classes, c.Bottlenecks
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrConfig}, args...)...)
	}
	switch {
	case cl.ShortJobMax <= 0:
		return bad("classes.short_job_max must be positive")
	case c.Counting.ShardsPerGPU < 0 || c.Counting.ShardsPerGPU > 1_000_000:
		return bad("counting.shards_per_gpu must be in [0, 1000000], not %d", c.Counting.ShardsPerGPU)
	case cl.LongTrainingMin <= cl.ShortJobMax:
		return bad("classes.long_training_min (%s) must exceed classes.short_job_max (%s)", cl.LongTrainingMin.D(), cl.ShortJobMax.D())
	case cl.ServiceMinDuration <= cl.ShortJobMax:
		return bad("classes.service_min_duration (%s) must exceed classes.short_job_max (%s)", cl.ServiceMinDuration.D(), cl.ShortJobMax.D())
	case !(cl.IdleUtilMax > 0 && cl.IdleUtilMax < cl.LowUtilMax && cl.LowUtilMax <= 100): // also rejects NaN
		return bad("need 0 < classes.idle_util_max (%v) < classes.low_util_max (%v) ≤ 100", cl.IdleUtilMax, cl.LowUtilMax)
	case !(cl.ServiceSteadyMin > 0 && cl.ServiceSteadyMin <= 1):
		return bad("classes.service_steady_min must be in (0, 1], not %v", cl.ServiceSteadyMin)
	case !(cl.ServiceBurstSpread > 0 && cl.ServiceBurstSpread <= 100):
		return bad("classes.service_burst_spread must be in (0, 100], not %v", cl.ServiceBurstSpread)
	case !(b.VRAMBoundFrac > 0 && b.VRAMBoundFrac <= 1):
		return bad("bottlenecks.vram_bound_frac must be in (0, 1], not %v", b.VRAMBoundFrac)
	case !(b.ComputeBoundUtil > cl.LowUtilMax && b.ComputeBoundUtil <= 100):
		return bad("bottlenecks.compute_bound_util (%v) must be in (classes.low_util_max, 100]", b.ComputeBoundUtil)
	case !(b.LowSMUtilMin >= 0 && b.LowSMUtilMin <= 100):
		return bad("bottlenecks.low_sm_util_min must be in [0, 100], not %v", b.LowSMUtilMin)
	case !(b.LowSMRatio > 0 && b.LowSMRatio <= 1):
		return bad("bottlenecks.low_sm_ratio must be in (0, 1], not %v", b.LowSMRatio)
	case !(b.IOBoundFrac > 0 && b.IOBoundFrac <= 1):
		return bad("bottlenecks.io_bound_frac must be in (0, 1], not %v", b.IOBoundFrac)
	case !(b.QueueBoundRatio > 0) || !finite(b.QueueBoundRatio):
		return bad("bottlenecks.queue_bound_ratio must be positive, not %v", b.QueueBoundRatio)
	case b.QueueBoundMinWait < 0:
		return bad("bottlenecks.queue_bound_min_wait must not be negative")
	case c.Summary.LimitMinRun < 0:
		return bad("summary.limit_min_run must not be negative")
	}
	return c.validateRecommendPlan(bad)
}

func (c Config) validateRecommendPlan(bad func(string, ...any) error) error {
	r, p := c.Recommend, c.Plan
	frac := func(v float64) bool { return v > 0 && v <= 1 } // also rejects NaN
	switch {
	case r.MinJobs < 1:
		return bad("recommend.min_jobs must be at least 1")
	case r.MinUserJobs < 1:
		return bad("recommend.min_user_jobs must be at least 1")
	case !(r.ConfidenceN0 > 0) || !finite(r.ConfidenceN0):
		return bad("recommend.confidence_n0 must be positive")
	case !frac(r.SharingVRAMMax) || r.SharingVRAMMax > 0.5:
		return bad("recommend.sharing_vram_max must be in (0, 0.5], not %v", r.SharingVRAMMax)
	case !frac(r.SharingShareMin):
		return bad("recommend.sharing_share_min must be in (0, 1], not %v", r.SharingShareMin)
	case !(r.SharingMargin >= 1) || !finite(r.SharingMargin):
		return bad("recommend.sharing_margin must be at least 1, not %v", r.SharingMargin)
	case r.MaxShards < 2 || r.MaxShards > 128:
		return bad("recommend.max_shards must be in [2, 128], not %d", r.MaxShards)
	case !(r.MPSUtilMin > 0 && r.MPSUtilMin <= 100):
		return bad("recommend.mps_util_min must be in (0, 100], not %v", r.MPSUtilMin)
	case !(r.OverRequestRatio > 1) || !finite(r.OverRequestRatio):
		return bad("recommend.over_request_ratio must exceed 1, not %v", r.OverRequestRatio)
	case !frac(r.IOShareMin), !frac(r.IdleShareMin), !frac(r.QueueShareMin):
		return bad("recommend.io_share_min, idle_share_min and queue_share_min must be in (0, 1]")
	case !frac(r.LongGrpFrac), !frac(r.BurstFrac), !frac(r.UserShareMax):
		return bad("recommend.long_grp_frac, user_share_max and burst_frac must be in (0, 1]")
	case !(p.Growth > -1) || !finite(p.Growth):
		return bad("plan.growth must exceed -1, not %v", p.Growth)
	case p.HorizonMonths < 0 || p.HorizonMonths > 120:
		return bad("plan.horizon_months must be in [0, 120], not %d", p.HorizonMonths)
	case !(p.NewDemand >= 0) || !finite(p.NewDemand):
		return bad("plan.new_demand must not be negative, not %v", p.NewDemand)
	case !(p.Headroom >= 0 && p.Headroom < 1):
		return bad("plan.headroom must be in [0, 1), not %v", p.Headroom)
	case !frac(p.VRAMShareMin), !frac(p.IOShareMin), !frac(p.WasteShareMin):
		return bad("plan.vram_share_min, io_share_min and waste_share_min must be in (0, 1]")
	case p.TargetP95Wait <= 0:
		return bad("plan.target_p95_wait must be positive")
	case p.LeadTimeMonths < 0 || p.LeadTimeMonths > 60:
		return bad("plan.lead_time_months must be in [0, 60], not %d", p.LeadTimeMonths)
	case p.MinWindow < 0 || p.MinJobs < 1:
		return bad("plan.min_window must not be negative and plan.min_jobs must be at least 1")
	case p.Seeds < 1 || p.Seeds > 100:
		return bad("plan.seeds must be in [1, 100], not %d", p.Seeds)
	case p.MaxPurchase < 0 || p.MaxPurchase > 4096:
		return bad("plan.max_purchase must be in [0, 4096] (0: double the model's GPUs, at least 32), not %d", p.MaxPurchase)
	case p.ReplayBudget < 1 || p.StepBudget < 1:
		return bad("plan.replay_budget and plan.step_budget must be at least 1")
	case !(p.DepreciationYears > 0) || !finite(p.DepreciationYears):
		return bad("plan.depreciation_years must be positive, not %v", p.DepreciationYears)
	}
	for _, pr := range p.Prices {
		if strings.TrimSpace(pr.Model) == "" {
			return bad("plan.prices: every entry needs a model")
		}
		if !(pr.Purchase > 0) || !(pr.RunningPerYear >= 0) || !(pr.CloudPerGPUHour > 0) ||
			!finite(pr.Purchase) || !finite(pr.RunningPerYear) || !finite(pr.CloudPerGPUHour) {
			return bad("plan.prices %s: purchase and cloud_per_gpu_hour must be positive and running_per_year not negative", pr.Model)
		}
	}
	return nil
}
