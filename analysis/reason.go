package analysis

import (
	"strings"

	"github.com/gpuprof/gpuprof/internal/present"
)

// Metric names a measured quantity a rule compares; its unit is fixed.
type Metric string

// Metrics the rules compare, with their units.
const (
	MetricElapsed      Metric = "elapsed"        // seconds
	MetricWait         Metric = "wait"           // seconds
	MetricWaitRatio    Metric = "wait_ratio"     // wait / run time
	MetricUtilMean     Metric = "util_mean"      // percent: the duty cycle (any kernel running)
	MetricSMMean       Metric = "sm_mean"        // percent: GPM's SM activity (the SMs busy)
	MetricUtilP50      Metric = "util_p50"       // percent
	MetricUtilSpread   Metric = "util_spread"    // p95 − p50, percentage points
	MetricVRAMPeakFrac Metric = "vram_peak_frac" // fraction of the card
	MetricVRAMSteady   Metric = "vram_steady"    // memory floor / peak
	MetricIOWait       Metric = "io_wait"        // fraction of wall time
	MetricUnusedGPUs   Metric = "unused_gpus"    // count
	MetricIdleGPUs     Metric = "idle_gpus"      // count of idle-allocated GPUs
)

// Op is a comparison.
type Op string

// Comparisons.
const (
	OpGE Op = ">="
	OpGT Op = ">"
	OpLT Op = "<"
	OpLE Op = "<="
	OpEQ Op = "=="
)

// Check is one comparison a rule made: Value Op Limit held.
type Check struct {
	Metric Metric  `json:"metric"`
	Value  float64 `json:"value"`
	Op     Op      `json:"op"`
	Limit  float64 `json:"limit"`
}

// Reason says which rule fired and on what numbers, or, for a job no rule
// could judge, why not.
type Reason struct {
	// Rule is the rule's name, e.g. "long_training", "short_debug.name",
	// "vram_bound.peak" (docs/analysis.md lists them).
	Rule string `json:"rule"`
	// Checks are the comparisons that held, in the rule's order.
	Checks []Check `json:"checks,omitempty"`
	// Note adds what the comparisons cannot say ("job name \"bash\"",
	// "memory steadiness not measured").
	Note string `json:"note,omitempty"`
}

// String renders the reason for people: "ran 06:12:00 ≥ 04:00:00 and mean
// util 87 % ≥ 30 %", in the forms the report and the CLI print.
func (r Reason) String() string {
	var b strings.Builder
	for i, c := range r.Checks {
		if i > 0 {
			b.WriteString(" and ")
		}
		b.WriteString(c.String())
	}
	if r.Note != "" {
		if b.Len() > 0 {
			b.WriteString("; ")
		}
		b.WriteString(r.Note)
	}
	return b.String()
}

// String renders one comparison in the metric's unit.
func (c Check) String() string {
	label, suffix := "", ""
	format := present.Decimal
	switch c.Metric {
	case MetricElapsed:
		label, format = "ran", present.Seconds
	case MetricWait:
		label, format = "waited", present.Seconds
	case MetricWaitRatio:
		label, format = "wait/run", present.Times
	case MetricUtilMean:
		label, format = "mean util", formatPercent
	case MetricSMMean:
		label, format = "mean SM activity", formatActivity
	case MetricUtilP50:
		label, format = "median util", formatPercent
	case MetricUtilSpread:
		label, suffix = "util p95−p50", " points"
	case MetricVRAMPeakFrac:
		label, format, suffix = "VRAM peak", present.Share, " of the card"
	case MetricVRAMSteady:
		label, format, suffix = "memory floor", present.Share, " of the peak"
	case MetricIOWait:
		label, format, suffix = "IO wait", present.Share, " of wall time"
	case MetricUnusedGPUs:
		label = "unused GPUs"
	case MetricIdleGPUs:
		label = "idle-allocated GPUs"
	default:
		label = string(c.Metric)
		// Shares and fractions of the recommendation rules read as
		// percentages, ratios as multiples.
		switch {
		case strings.HasSuffix(label, "_share") || strings.HasSuffix(label, "_fraction"):
			format = present.Share
		case strings.HasPrefix(label, "limit_ratio"):
			format = present.Times
		}
	}
	return label + " " + format(c.Value) + suffix + " " + c.Op.symbol() + " " + format(c.Limit)
}

func (o Op) symbol() string {
	switch o {
	case OpGE:
		return "≥"
	case OpLE:
		return "≤"
	case OpEQ:
		return "="
	}
	return string(o)
}

// formatPercent prints a value in percent as the report and the CLI do,
// with a space before the sign (present.Decimal): "87 %", "29.9 %".
func formatPercent(v float64) string { return present.Decimal(v) + " %" }

// formatActivity prints a GPM activity in percent as every output does
// (present.Activity: "0.02 %", "4.5 %", "92 %").
func formatActivity(v float64) string { return present.Activity(v) + " %" }
