package analysis

import (
	"errors"
	"fmt"
	"os"
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
	// job's GPUs of each GPU's median) at or above this is compute-bound.
	ComputeBoundUtil float64 `toml:"compute_bound_util"`
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
			IOBoundFrac:       0.2,
			IONodeScope:       true,
			QueueBoundRatio:   4,
			QueueBoundMinWait: Duration(15 * time.Minute),
		},
		Summary: SummaryConfig{
			LimitMinRun: Duration(time.Minute),
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
	case !(b.IOBoundFrac > 0 && b.IOBoundFrac <= 1):
		return bad("bottlenecks.io_bound_frac must be in (0, 1], not %v", b.IOBoundFrac)
	case !(b.QueueBoundRatio > 0) || !finite(b.QueueBoundRatio):
		return bad("bottlenecks.queue_bound_ratio must be positive, not %v", b.QueueBoundRatio)
	case b.QueueBoundMinWait < 0:
		return bad("bottlenecks.queue_bound_min_wait must not be negative")
	case c.Summary.LimitMinRun < 0:
		return bad("summary.limit_min_run must not be negative")
	}
	return nil
}
