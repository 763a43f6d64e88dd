package capacity

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/internal/present"
)

// Verdict codes: what the plan says to do. Every output prints the
// Verdict's Text, written here and nowhere else.
const (
	// VerdictInsufficientData: the window or the jobs are below
	// plan.min_window or plan.min_jobs.
	VerdictInsufficientData = "insufficient_data"
	// VerdictNoInventory: no cluster to compare the demand with.
	VerdictNoInventory = "no_inventory"
	// VerdictNotSimulated: the replay budget does not cover the plan.
	VerdictNotSimulated = "not_simulated"
	// VerdictNoChange: the target holds to the horizon and no rule
	// recommends a change.
	VerdictNoChange = "no_change"
	// VerdictPolicy: no purchase is needed; the recommendations (free)
	// are what to do, and with them the target holds to the horizon.
	VerdictPolicy = "policy"
	// VerdictBuy: after the free changes, the purchase is needed.
	VerdictBuy = "buy"
	// VerdictNotMet: no purchase within plan.max_purchase meets the
	// target.
	VerdictNotMet = "not_met"
	// VerdictLeftOut: jobs ask for what the cluster does not have, so
	// they could never start in the replay: none could (the plan is not
	// simulated), or the other jobs meet the target and no rule
	// recommends a change. It stands where "no change" would: that is
	// never said while jobs could not run.
	VerdictLeftOut = "left_out"
)

// leftOutPrefix starts SimPlan.NotSimulated when the replay could take
// none of the window's GPU jobs.
const leftOutPrefix = "every GPU job left out: "

// Binding constraints a verdict names.
const (
	BindingGPUModel  = "gpu_model"
	BindingGPUMemory = "gpu_memory"
	BindingStorage   = "storage"
	BindingPolicy    = "policy"
	// BindingCluster: the cluster as described (inventory, slurm.conf)
	// lacks what jobs ask for.
	BindingCluster = "cluster"
)

// Verdict is the plan's answer: a code, the constraint that binds (and
// which model, partition or rule), the sentence every output prints, and
// the evidence. Reliable is false when the replay's calibration is poor.
type Verdict struct {
	Code        string   `json:"code"`
	Binding     string   `json:"binding,omitempty"`
	BindingName string   `json:"binding_name,omitempty"`
	Text        string   `json:"text"`
	Evidence    []string `json:"evidence"`
	Reliable    bool     `json:"reliable"`
}

// verdictOf decides the verdict from the plan and the findings: it can
// say "no change" only when there is no recommendation, and "buy" only
// for a model whose GPUs were all busy at some time in the replay.
//
// It stays one function: its cases share the horizon and target words, the
// worst waits and the free changes' words, and the left-out, timeline and
// calibration sentences after them extend the same Text and Evidence; kept
// together, the order of the sentences here is the order they print.
func verdictOf(sp *SimPlan, f *analysis.Findings, recs []analysis.Recommendation) Verdict {
	v := Verdict{Evidence: []string{}}
	target := present.Seconds(sp.TargetP95Wait)
	horizon := fmt.Sprintf("the %d-month horizon", sp.Months)
	upTo := "up to " + horizon
	if sp.Months == 0 {
		horizon, upTo = "today's load", "at today's load"
	}
	switch {
	case strings.HasPrefix(sp.NotSimulated, "not enough data"):
		v.Code = VerdictInsufficientData
		v.Text = "Not enough data to plan: " + strings.TrimPrefix(sp.NotSimulated, "not enough data: ") + "."
		return v
	case strings.HasPrefix(sp.NotSimulated, leftOutPrefix):
		v.Code, v.Binding = VerdictLeftOut, BindingCluster
		v.Text = fmt.Sprintf("No job can be replayed: every one of the window's %d GPU %s asks for what the cluster does not have (%s). %s",
			sp.Jobs.LeftOut, present.Plural(sp.Jobs.LeftOut, "job", "jobs"), strings.Join(sp.Jobs.LeftOutWhy, "; "), checkClusterWords)
		return v
	case strings.HasPrefix(sp.NotSimulated, "no inventory"):
		v.Code = VerdictNoInventory
		v.Text = "No inventory: cannot compare the demand with the GPUs there are (no GPU in the profiles, no GPU node in slurm.conf, no --node)."
		if sp.Inventory.Misfit != "" {
			v.Text = "No inventory: cannot compare the demand with the GPUs there are (" + sp.Inventory.Misfit + ")."
		}
		return v
	case !sp.Simulated || sp.NotSimulated != "":
		// Not replayed at all, or stopped by a budget part way: a partial
		// plan has no verdict.
		v.Code = VerdictNotSimulated
		v.Text = "Not simulated: " + sp.NotSimulated + "."
		return v
	}
	v.Reliable = sp.Calibration != nil && sp.Calibration.Reliable
	if sp.Calibration != nil {
		c := sp.Calibration
		v.Evidence = append(v.Evidence, fmt.Sprintf("calibration on %d jobs: start order rank correlation %.2f, p95 waits within ±%s of the observed; %s",
			c.Jobs, c.RankCorrelation, present.Seconds(sp.CalibrationError), map[bool]string{true: "good", false: "poor"}[c.Reliable]))
		for _, u := range c.Unreproduced {
			v.Evidence = append(v.Evidence, "calibration: "+u)
		}
	}
	cons := f.Plan.Constraints
	helping := sp.Free
	freeWords := ""
	if len(helping) > 0 {
		freeWords = fmt.Sprintf(" with %s applied", present.List(helping))
	}
	wTodayName, wToday := worstOrEmpty(sp.Horizon)
	wFreeName, wFree := worstOrEmpty(sp.WithFree)
	v.Evidence = append(v.Evidence, fmt.Sprintf("at %s with today's rules the worst replayed p95 wait is %s's %s (target %s)", horizon, wTodayName, present.Seconds(wToday), target))
	if len(helping) > 0 {
		v.Evidence = append(v.Evidence, fmt.Sprintf("with %s: %s's %s", present.List(helping), wFreeName, present.Seconds(wFree)))
	}
	met := wFree <= sp.TargetP95Wait
	switch {
	case met && len(recs) == 0 && sp.Jobs.LeftOut > 0:
		// "No change" is never said while jobs could not run.
		v.Code, v.Binding = VerdictLeftOut, BindingCluster
		v.Text = fmt.Sprintf("Not every job can run on this cluster: %s The other jobs keep their replayed p95 wait under %s %s (worst: %s, %s), and no rule found a change to recommend. %s",
			sp.Jobs.LeftOutWords(), target, upTo, wFreeName, present.Seconds(wFree), checkClusterWords)
	case met && len(recs) == 0:
		v.Code = VerdictNoChange
		v.Text = fmt.Sprintf("No change needed: every partition and GPU model keeps its replayed p95 wait under %s %s (worst: %s, %s), and no rule found a change to recommend.",
			target, upTo, wFreeName, present.Seconds(wFree))
	case met:
		v.Code, v.Binding = VerdictPolicy, BindingPolicy
		if wToday <= sp.TargetP95Wait {
			v.Text = fmt.Sprintf("No purchase needed: every partition and GPU model keeps its replayed p95 wait under %s %s (worst: %s, %s). The %s below still cut waste or waits.",
				target, upTo, wTodayName, present.Seconds(wToday), present.Count(len(recs), "recommendation", "recommendations"))
		} else {
			v.Text = fmt.Sprintf("Change policy first, no purchase needed: %s, every partition and GPU model keeps its replayed p95 wait under %s at %s (worst: %s, %s; %s without them).",
				strings.TrimPrefix(freeWords, " "), target, horizon, wFreeName, present.Seconds(wFree), present.Seconds(wToday))
		}
		if slices.Contains(cons, analysis.ConstraintStorage) && hasKind(recs, analysis.RecStorage) {
			v.Binding = BindingStorage
			v.Text += " Storage, not GPUs, limits the work: see the storage recommendation."
		}
	case len(sp.Purchase) > 0 && purchaseMeets(sp):
		v.Code, v.Binding = VerdictBuy, BindingGPUModel
		v.BindingName = sp.Purchase[0].Model
		wpName, wp := worstOrEmpty(sp.WithPurchase)
		after := ""
		if len(helping) > 0 {
			after = fmt.Sprintf(" after applying %s", present.List(helping))
		}
		v.Text = fmt.Sprintf("Buy %s%s: at %s the worst replayed p95 wait falls from %s (%s) to %s (%s), under the %s target.",
			purchaseWords(sp.Purchase), after, horizon, present.Seconds(wFree), wFreeName, present.Seconds(wp), wpName, target)
		if slices.Contains(cons, analysis.ConstraintMemory) {
			v.Binding = BindingGPUMemory
			v.Text += " Much of the work is bound by GPU memory: buy them as GPUs with more memory."
		}
		for _, c := range sp.Costs {
			if c.Cheaper == "rent" {
				v.Text += fmt.Sprintf(" Renting that work is cheaper than owning the %s: %s would be busy %s of the time, below the break-even %s.",
					c.Model, present.Plural(c.GPUs, "it", "they"), present.Share(c.Utilisation), present.Share(c.BreakEven))
			} else {
				v.Evidence = append(v.Evidence, fmt.Sprintf("owning the %s is cheaper than renting: busy %s of the time, above the break-even %s",
					c.Model, present.Share(c.Utilisation), present.Share(c.BreakEven)))
			}
		}
		for _, m := range sp.Models {
			if m.Needed > 0 {
				v.Evidence = append(v.Evidence, fmt.Sprintf("%s: %s now; +%d brings its replayed p95 wait under %s", m.Model, present.Count(m.GPUs, "GPU", "GPUs"), m.Needed, target))
				if w := placedModelWords(sp.WithFree, m.Model); w != "" {
					v.Evidence = append(v.Evidence, w)
				}
			}
		}
	default:
		v.Code = VerdictNotMet
		v.Binding = BindingGPUModel
		why := ""
		for _, m := range sp.Models {
			if m.Needed < 0 {
				v.BindingName = m.Model
				why = fmt.Sprintf(" %s: %s.", m.Model, m.Why)
				if strings.Contains(m.Why, "free at every moment") {
					v.Binding = BindingPolicy
				}
				break
			}
		}
		wpName, wp := wFreeName, wFree
		if sp.WithPurchase != nil {
			wpName, wp = worstOrEmpty(sp.WithPurchase)
		}
		if why == "" {
			// Each model's own waits met the target with its purchase, but
			// a partition's did not: what binds is the partition's rules or
			// job shapes, not a model's count.
			v.Binding, v.BindingName = BindingPolicy, wpName
			v.Text = fmt.Sprintf("The smallest purchase per GPU model (%s) still leaves %s at a replayed p95 wait of %s at %s, against %s%s.",
				purchaseWords(sp.Purchase), wpName, present.Seconds(wp), horizon, target, cellWords(sp, wpName))
		} else {
			v.Text = fmt.Sprintf("No purchase of up to %s of one model meets the target: at %s the worst replayed p95 wait stays %s (%s), against %s.%s",
				present.Count(maxPurchase(sp), "GPU", "GPUs"), horizon, present.Seconds(wp), wpName, target, why)
			if w := placedModelWords(sp.WithFree, v.BindingName); w != "" {
				v.Evidence = append(v.Evidence, w)
			}
		}
	}
	// The jobs the answer stands on: a replay that left out more than
	// LeftOutMaxShare of the GPU-hours is said to in the sentence.
	if lo := stoodOn(sp, v.Code); lo.LeftOut > 0 && v.Code != VerdictLeftOut {
		if lo.LeftOutShare > LeftOutMaxShare {
			v.Text += " " + lo.LeftOutWords()
		} else {
			v.Evidence = append(v.Evidence, strings.TrimSuffix(lo.LeftOutWords(), "."))
		}
	}
	if tl := sp.Timeline; tl != nil && v.Code != VerdictNoChange {
		switch {
		case tl.BreachMonth == 0:
			v.Evidence = append(v.Evidence, fmt.Sprintf("without a purchase the target is missed already (%s, replayed p95 %s)", tl.Group, tl.P95Text()))
		case tl.BreachMonth > 0:
			s := fmt.Sprintf("Without a purchase, growth of %s a year breaks the target in month %d (%s, %s: replayed p95 %s); with a %d-month lead time, order by %s",
				sp.GrowthWords(), tl.BreachMonth, tl.BreachDate.Format("2006-01"), tl.Group, tl.P95Text(),
				sp.LeadTimeMonths, tl.OrderBy.Format("2006-01-02"))
			if tl.Late {
				s += " (already past: order now)"
			}
			v.Text += " " + s + "."
		default:
			v.Evidence = append(v.Evidence, fmt.Sprintf("the target holds for the %d months searched at %s growth a year", tl.SearchedMonths, sp.GrowthWords()))
		}
	}
	if !v.Reliable {
		v.Text += " The replay's calibration is poor: treat these numbers as indicative."
	}
	return v
}

// cellWords says why a partition the purchase search left over the
// target is over it: its jobs on a model still wait longer (the models
// searched after that one changed where jobs ran), or — its jobs on
// every model waiting under the target — the p95s are medians over the
// seeds, and a partition's median need not lie under its models'.
func cellWords(sp *SimPlan, group string) string {
	const bind = ": its rules or job shapes bind, not a model's count"
	part, ok := strings.CutPrefix(group, "partition ")
	if !ok || sp.WithPurchase == nil {
		return bind
	}
	var over []string
	n := 0
	for _, c := range sp.WithPurchase.Cells {
		if c.Partition != part || c.Jobs.Median < 1 {
			continue
		}
		n++
		if c.WaitP95.Median > sp.TargetP95Wait {
			over = append(over, fmt.Sprintf("%s %s", c.Model, present.Seconds(c.WaitP95.Median)))
		}
	}
	switch {
	case len(over) > 0:
		return fmt.Sprintf(": its jobs on %s still wait longer (replayed p95), with the purchases of the models searched after", present.List(over))
	case n > 0 && sp.Seeds > 1:
		return fmt.Sprintf(", though its jobs on each GPU model wait under it: each wait is the median over %d seeds of one replay's p95, and a partition's median need not lie under its models'", sp.Seeds)
	}
	return bind
}

// placedModelWords is the evidence for a purchase search of a model no
// job needed (Group.PlacedOnly): its jobs asked for no GPU type, and
// which model they ran on is the replay's placement; "" for a model jobs
// asked for.
func placedModelWords(sc *Scenario, model string) string {
	if sc == nil {
		return ""
	}
	for _, g := range sc.Models {
		if g.Name == model && g.PlacedOnly() {
			return fmt.Sprintf("%s: no job asked for it; the %d %s that could run on it could run on another model of their partitions as well (no GPU type asked): it is the model the replay placed them on (first fit in node order), and GPUs of any model they can run on would serve them",
				model, g.Placeable, present.Plural(g.Placeable, "job", "jobs"))
		}
	}
	return ""
}

// checkClusterWords says what to check when jobs ask for what the
// cluster does not have.
const checkClusterWords = "Check that the inventory and slurm.conf describe the cluster the jobs ran on, or what those jobs ask for."

// stoodOn is the jobs of the replay the verdict's answer stands on: with
// the purchase for buy and not_met (when one was found), with the free
// changes otherwise, else today's.
func stoodOn(sp *SimPlan, code string) SimJobs {
	switch {
	case (code == VerdictBuy || code == VerdictNotMet) && sp.WithPurchase != nil:
		return sp.WithPurchase.Jobs
	case sp.WithFree != nil:
		return sp.WithFree.Jobs
	}
	return sp.Jobs
}

// purchaseWords writes "4 NVIDIA H100 80GB HBM3 GPUs and 1 NVIDIA L40S GPU",
// or "none".
func purchaseWords(ps []Purchase) string {
	var parts []string
	for _, p := range ps {
		if strings.EqualFold(p.Model, "gpu") {
			// Untyped GPUs: slurm.conf names no type, no profile a model.
			parts = append(parts, fmt.Sprintf("%d more %s", p.GPUs, present.Plural(p.GPUs, "GPU", "GPUs")))
			continue
		}
		parts = append(parts, fmt.Sprintf("%d %s %s", p.GPUs, p.Model, present.Plural(p.GPUs, "GPU", "GPUs")))
	}
	if len(parts) == 0 {
		return "none"
	}
	return present.List(parts)
}

func purchaseMeets(sp *SimPlan) bool {
	if sp.WithPurchase == nil {
		return false
	}
	_, p := worstOrEmpty(sp.WithPurchase)
	if p > sp.TargetP95Wait {
		return false
	}
	for _, m := range sp.Models {
		if m.Needed < 0 {
			return false
		}
	}
	return true
}

func maxPurchase(sp *SimPlan) int {
	n := 0
	for _, m := range sp.Models {
		for _, c := range m.Curve {
			n = max(n, c.Added)
		}
	}
	return n
}

func worstOrEmpty(sc *Scenario) (string, float64) {
	if sc == nil {
		return "", 0
	}
	n, p := worst(*sc, false)
	return n, p.Median
}

func hasKind(recs []analysis.Recommendation, kind string) bool {
	return slices.ContainsFunc(recs, func(r analysis.Recommendation) bool { return r.Kind == kind })
}

// BindingWords names the binding constraint in words ("GPU model NVIDIA
// H100 80GB HBM3", "GPU memory", "storage", "policy (…)"); "" for none.
func (v Verdict) BindingWords() string {
	switch v.Binding {
	case BindingGPUModel:
		if v.BindingName != "" {
			return "GPU model " + v.BindingName
		}
		return "the number of GPUs"
	case BindingGPUMemory:
		if v.BindingName != "" {
			return "GPU memory (" + v.BindingName + ")"
		}
		return "GPU memory"
	case BindingStorage:
		return "storage"
	case BindingCluster:
		return "the cluster as described (jobs ask for what it does not have)"
	case BindingPolicy:
		if v.BindingName != "" {
			return "policy in " + v.BindingName + " (rules and job shapes, not hardware)"
		}
		return "policy (rules and sharing, not hardware)"
	}
	return ""
}
