package analysis

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/gpuprof/gpuprof/internal/present"
)

// MonthDemand is one whole month's GPU demand of a cluster: the GPU-hours
// its jobs held in it (Headline.AllocatedGPUHours, the figure of the
// report's months table).
type MonthDemand struct {
	Month    string  `json:"month"` // "2026-10"
	GPUHours float64 `json:"gpu_hours"`
	// Models are the month's GPU-hours per GPU model (Workload.Models;
	// a model "" is GPUs without a per-GPU record and is left out).
	Models map[string]float64 `json:"models,omitempty"`
}

// ModelGrowth is one GPU model's demand trend — the same fit as the
// cluster's over the trailing run of months in which the model held
// GPU-hours — and the growth the horizon applies to the model's jobs
// (ModelGrowthOf): the model's own trend where it is estimated and
// usable (GrowthUsable, the cluster's rule), else the cluster's figure.
type ModelGrowth struct {
	Model string `json:"model"`
	// Months is how many months the fit used, From and To the first and
	// last of them (the trailing run, also when shorter than
	// MinGrowthMonths).
	Months int    `json:"months"`
	From   string `json:"from"`
	To     string `json:"to"`
	// Estimated is whether the run is long enough for a trend; Annual,
	// Low and High are then the trend and its 95 % interval.
	Estimated bool    `json:"estimated"`
	Usable    bool    `json:"usable"`
	Annual    float64 `json:"annual"`
	Low       float64 `json:"low"`
	High      float64 `json:"high"`
	// Used is the growth per year the horizon applies to the model's
	// jobs; Source is "model" (its own trend) or "cluster" (the
	// cluster's figure, GrowthEstimate.Used), and Reason why: "trend",
	// "set" (plan.growth or --growth set one figure for all),
	// "few_months" or "too_uncertain".
	Used   float64 `json:"used"`
	Source string  `json:"source"`
	Reason string  `json:"reason"`
}

// GrowthEstimate is the demand growth a plan used, and where it came
// from: the site's own months (a log-linear trend of GPU-hours per
// month), or the configured value when too few whole months are held,
// when the trend is too uncertain to plan on (GrowthUsable), or when
// --growth or the configuration sets one.
type GrowthEstimate struct {
	// Source is "history" (Annual is used), "configured" (plan.growth or
	// --growth set it) or "default" (the built-in plan.growth: too few
	// whole months, or a trend too uncertain to plan on).
	Source string `json:"source"`
	// Reason is why Source: "trend" (the estimate is usable and used),
	// "set" (plan.growth or --growth), "few_months" (fewer than
	// MinGrowthMonths whole months) or "too_uncertain" (the estimate's
	// 95 % interval is wider than MaxGrowthSpread allows).
	Reason string `json:"reason"`
	// Used is the growth per year the plan used.
	Used float64 `json:"used"`
	// Months are the whole months the trend is estimated from, oldest
	// first (all of those found, also when not used).
	Months []MonthDemand `json:"months"`
	// Annual is the estimated growth per year, Low and High its 95 %
	// confidence interval; set when Estimated.
	Estimated bool `json:"estimated"`
	// Usable is whether the estimate may be planned on (GrowthUsable:
	// next year's demand by its 95 % interval, (1 + High) / (1 + Low),
	// spans at most MaxGrowthSpread); false when not Estimated.
	Usable bool    `json:"usable"`
	Annual float64 `json:"annual,omitempty"`
	Low    float64 `json:"low,omitempty"`
	High   float64 `json:"high,omitempty"`
	// Models are the GPU models named in Months, each with its own
	// trend where its months allow (GrowthByModel) and the growth the
	// horizon applies to its jobs (ModelGrowthOf): its own trend where
	// usable and nothing is configured, else Used.
	Models []ModelGrowth `json:"models"`
	// Text is the sentence every output prints.
	Text string `json:"text"`
}

// MinGrowthMonths is the fewest whole months a trend is estimated from.
const MinGrowthMonths = 3

// EstimateGrowth fits ln(GPU-hours a day) = a + b·month (each month's
// GPU-hours over its days) by least squares over
// the months given (consecutive whole months, oldest first) and returns
// the growth per year exp(12·b) − 1 with its 95 % confidence interval
// (Student's t on n − 2 degrees of freedom, from the slope's standard
// error); ok is false with fewer than MinGrowthMonths months or a month
// without GPU-hours. With three months the interval is wide: it says how
// little three points tell.
func EstimateGrowth(months []MonthDemand) (annual, low, high float64, ok bool) {
	n := len(months)
	if n < MinGrowthMonths {
		return 0, 0, 0, false
	}
	y := make([]float64, n)
	var sx, sy float64
	for i, m := range months {
		if !(m.GPUHours > 0) || !finite(m.GPUHours) {
			return 0, 0, 0, false
		}
		y[i] = math.Log(m.GPUHours / daysIn(m.Month))
		sx += float64(i)
		sy += y[i]
	}
	mx, my := sx/float64(n), sy/float64(n)
	var sxx, sxy float64
	for i := range months {
		dx := float64(i) - mx
		sxx += dx * dx
		sxy += dx * (y[i] - my)
	}
	b := sxy / sxx
	a := my - b*mx
	var sse float64
	for i := range months {
		r := y[i] - (a + b*float64(i))
		sse += r * r
	}
	se := math.Sqrt(sse/float64(n-2)) / math.Sqrt(sxx)
	t := tQuantile975(n - 2)
	annual = math.Exp(12*b) - 1
	low, high = math.Exp(12*(b-t*se))-1, math.Exp(12*(b+t*se))-1
	return annual, low, high, true
}

// MaxGrowthSpread is the most that the high end of an estimated
// growth's 95 % interval may exceed its low end, as a ratio of next
// year's demand, (1 + High) / (1 + Low), for a plan to be based on it.
// The horizon multiplies today's demand by 1 + g, so the interval says
// next year's demand lies between (1 + Low) and (1 + High) times
// today's; at a ratio of 1.5, the figure planned on (the middle, in
// ratio) is within ±22 % of either end, about the plan's 20 % headroom,
// which absorbs it. Wider, the interval's two ends call for different
// purchases, and one figure between them would mislead whoever buys on
// it. The ratio, not the width in percentage points, is bounded,
// because purchases scale with demand: 196 % to 333 % (next year 2.96
// to 4.33 times today) is as sure as 0 % to 46 %. It is a bound on the
// standard error of the trend's slope: 24·t·se ≤ ln 1.5. A steady trend
// meets it with a few months (five months within a few per cent of
// their trend); noisy months do not (the demo's four months give
// −94 % to +699 %, a ratio of 129).
const MaxGrowthSpread = 1.5

// GrowthUsable is the rule of whether an estimated growth (its 95 %
// interval low to high, from EstimateGrowth) may be planned on: the
// interval's high end is at most MaxGrowthSpread times its low end, as
// next year's demand. The plan and the report both apply it (GrowthOf),
// so they agree.
func GrowthUsable(low, high float64) bool {
	return finite(low) && finite(high) && low > -1 && (1+high)/(1+low) <= MaxGrowthSpread
}

// daysIn is how many days the month ("2026-02") has, so that the trend
// is of GPU-hours a day and February's three days fewer are not read as
// a fall in demand; a month not in that form counts as 30 days.
func daysIn(month string) float64 {
	t, err := time.Parse("2006-01", month)
	if err != nil {
		return 30
	}
	return t.AddDate(0, 1, 0).Sub(t).Hours() / 24
}

// tQuantile975 is Student's t 0.975 quantile on df degrees of freedom
// (two-sided 95 %); past 30, the normal's 1.96 plus its first
// correction.
func tQuantile975(df int) float64 {
	table := []float64{0, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
		2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
		2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042}
	if df >= 1 && df < len(table) {
		return table[df]
	}
	return 1.96 + 2.4/float64(max(df, 1))
}

// GrowthOf is the growth a plan uses: the configured value when set
// (configured, or --growth), else the trend of the whole months when
// there are enough and it is usable (GrowthUsable), else the default;
// with the sentence that says which and why.
func GrowthOf(months []MonthDemand, value float64, configured bool) GrowthEstimate {
	g := GrowthEstimate{Source: "default", Used: value, Months: months, Models: GrowthByModel(months)}
	if g.Months == nil {
		g.Months = []MonthDemand{}
	}
	g.Annual, g.Low, g.High, g.Estimated = EstimateGrowth(months)
	g.Usable = g.Estimated && GrowthUsable(g.Low, g.High)
	span := ""
	if len(months) > 0 {
		span = fmt.Sprintf(" (%s to %s)", months[0].Month, months[len(months)-1].Month)
	}
	trend := ""
	if g.Estimated {
		trend = fmt.Sprintf("%s a year (95 %% interval %s to %s) from %d whole months of GPU-hours%s: %s",
			present.Percent(g.Annual), present.Percent(g.Low), present.Percent(g.High), len(months), span, monthsList(months))
	}
	uncertain := ""
	if g.Estimated && !g.Usable {
		uncertain = fmt.Sprintf(" (too uncertain to plan on: by its 95 %% interval next year's demand is %s to %s times today's, the high end more than %s times the low)",
			present.Number(1+g.Low, 2), present.Number(1+g.High, 2), present.Number(MaxGrowthSpread, 1))
	}
	switch {
	case configured && g.Estimated:
		g.Source, g.Reason = "configured", "set"
		g.Text = fmt.Sprintf("Demand growth %s a year, as configured (plan.growth or --growth); the site's own trend is %s%s.", present.Percent(value), trend, uncertain)
	case configured:
		g.Source, g.Reason = "configured", "set"
		g.Text = fmt.Sprintf("Demand growth %s a year, as configured (plan.growth or --growth).", present.Percent(value))
	case g.Usable:
		g.Source, g.Reason, g.Used = "history", "trend", g.Annual
		g.Text = fmt.Sprintf("Demand growth estimated from the site's own history: %s.", trend)
	case g.Estimated:
		g.Reason = "too_uncertain"
		g.Text = fmt.Sprintf("Demand growth %s a year, the configured default: the site's own trend is too uncertain to plan on (by its 95 %% interval next year's demand is %s to %s times today's, the high end more than %s times the low); it is %s.",
			present.Percent(value), present.Number(1+g.Low, 2), present.Number(1+g.High, 2), present.Number(MaxGrowthSpread, 1), trend)
	default:
		g.Reason = "few_months"
		g.Text = fmt.Sprintf("Demand growth %s a year, the configured default: %d whole %s of jobs held%s, at least %d needed to estimate the site's own trend.",
			present.Percent(value), len(months), present.Plural(len(months), "month", "months"), span, MinGrowthMonths)
	}
	g.Models = ModelGrowthOf(g.Models, g.Used, configured)
	if len(g.Models) > 0 {
		g.Text += " " + modelGrowthText(g.Models, g.Used, configured)
	}
	return g
}

// ModelGrowthOf sets the growth the horizon applies to each model's
// jobs: the model's own trend where it is estimated and usable
// (GrowthUsable, the cluster's rule) and no figure is configured, else
// cluster, the cluster's figure (GrowthEstimate.Used). A configured
// figure (plan.growth or --growth) is used for every model.
func ModelGrowthOf(models []ModelGrowth, cluster float64, configured bool) []ModelGrowth {
	for i := range models {
		m := &models[i]
		m.Usable = m.Estimated && GrowthUsable(m.Low, m.High)
		m.Used, m.Source = cluster, "cluster"
		switch {
		case configured:
			m.Reason = "set"
		case m.Usable:
			m.Used, m.Source, m.Reason = m.Annual, "model", "trend"
		case m.Estimated:
			m.Reason = "too_uncertain"
		default:
			m.Reason = "few_months"
		}
	}
	return models
}

// ModelGrowthUsed is the growth per year of each model whose own trend
// the horizon applies (Source "model"); nil when none.
func ModelGrowthUsed(models []ModelGrowth) map[string]float64 {
	var out map[string]float64
	for _, m := range models {
		if m.Source == "model" {
			if out == nil {
				out = map[string]float64{}
			}
			out[m.Model] = m.Used
		}
	}
	return out
}

// modelGrowthText says, per model, what growth the horizon applies to
// its jobs and why.
func modelGrowthText(models []ModelGrowth, cluster float64, configured bool) string {
	parts := make([]string, len(models))
	for i, m := range models {
		trend := fmt.Sprintf("%s a year (95 %% interval %s to %s, %d months %s to %s)",
			present.Percent(m.Annual), present.Percent(m.Low), present.Percent(m.High), m.Months, m.From, m.To)
		switch m.Reason {
		case "trend":
			parts[i] = fmt.Sprintf("%s %s, its own trend", m.Model, trend)
		case "set":
			if m.Estimated {
				parts[i] = fmt.Sprintf("%s %s (its own trend %s)", m.Model, present.Percent(m.Used), trend)
			} else {
				parts[i] = fmt.Sprintf("%s %s", m.Model, present.Percent(m.Used))
			}
		case "too_uncertain":
			parts[i] = fmt.Sprintf("%s %s, the cluster's figure: its own trend, %s, is too uncertain to plan on (next year %s to %s times today's)",
				m.Model, present.Percent(m.Used), trend, present.Number(1+m.Low, 2), present.Number(1+m.High, 2))
		default:
			parts[i] = fmt.Sprintf("%s %s, the cluster's figure: %d whole %s of its GPU-hours in a row, at least %d needed for its own trend",
				m.Model, present.Percent(m.Used), m.Months, present.Plural(m.Months, "month", "months"), MinGrowthMonths)
		}
	}
	head := "Per GPU model, the horizon grows each model's jobs by its own trend where its months give one to plan on (the same rule), else by the cluster's figure: "
	if configured {
		head = fmt.Sprintf("Per GPU model: every model's jobs grow by the configured %s: ", present.Percent(cluster))
	}
	return head + strings.Join(parts, "; ") + "."
}

// GrowthByModel is the demand trend of each GPU model named in months
// (consecutive whole months, oldest first): EstimateGrowth over the
// trailing run of months in which the model held GPU-hours, Estimated
// where that run is at least MinGrowthMonths long; by name. GPUs without
// a model ("") have no trend of their own. Used and Source are
// ModelGrowthOf's.
func GrowthByModel(months []MonthDemand) []ModelGrowth {
	var names []string
	seen := map[string]bool{}
	for _, m := range months {
		for name := range m.Models {
			if name != "" && !seen[name] {
				seen[name] = true
				names = append(names, name)
			}
		}
	}
	slices.Sort(names)
	out := []ModelGrowth{}
	for _, name := range names {
		var run []MonthDemand
		for i := len(months) - 1; i >= 0; i-- {
			h := months[i].Models[name]
			if !(h > 0) {
				break
			}
			run = append(run, MonthDemand{Month: months[i].Month, GPUHours: h})
		}
		slices.Reverse(run)
		mg := ModelGrowth{Model: name, Months: len(run)}
		if len(run) > 0 {
			mg.From, mg.To = run[0].Month, run[len(run)-1].Month
		}
		mg.Annual, mg.Low, mg.High, mg.Estimated = EstimateGrowth(run)
		out = append(out, mg)
	}
	return out
}

func monthsList(months []MonthDemand) string {
	parts := make([]string, len(months))
	for i, m := range months {
		parts[i] = m.Month + " " + present.Int(int(math.Round(m.GPUHours))) + " GPU-h"
	}
	return strings.Join(parts, ", ")
}
