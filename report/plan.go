package report

import (
	"fmt"
	"github.com/gpuprof/gpuprof/internal/present"
	"math"
	"strings"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/capacity"
)

// The capacity plan is shown in two sections: "Capacity plan", the
// verdict of the simulated plan (d.SimPlan) with its binding constraint
// and evidence, and "What buying or changing would do", the numbers
// behind it — the free changes' replayed effects, the purchase per GPU
// model with its chart, the timeline to the target's breach, buy against
// rent, and last Little's law as the cross-check by averages. Every
// sentence of the verdict is capacity.Verdict.Text, written in one place
// for the CLI, the report and the JSON.

// planSection is the verdict.
func planSection(d *Data) section {
	s := section{ID: "plan", Title: "Capacity plan"}
	sp := d.SimPlan
	if sp == nil {
		s.para("Verdict: none. No capacity plan was simulated for this report (no queue replay ran), so there is no verdict; the cross-check by averages under \u201cWhat buying or changing would do\u201d cannot see queues at peak hours and is not one.")
		return s
	}
	v := sp.Verdict
	if v.Text == "" {
		s.para("Verdict: none (the plan carries no verdict).")
	} else {
		s.para("Verdict: %s", v.Text)
	}
	if b := v.BindingWords(); b != "" {
		s.para("Binding constraint: %s.", b)
	}
	if len(v.Evidence) > 0 {
		s.para("Evidence:")
		s.list(v.Evidence)
	}
	s.para("%s", planTerms(sp))
	if g := sp.GrowthEstimate; g != nil {
		s.para("%s", g.Text)
	}
	if sp.Simulated {
		s.para("%s", replayWords(sp))
	}
	return s
}

// planTerms says what the plan plans against.
func planTerms(sp *capacity.SimPlan) string {
	return fmt.Sprintf("Planned against a target p95 queue wait of at most %s in every partition and GPU model, growth of %s a year, a %d-month horizon, %s GPUs of new demand and a procurement lead time of %s.",
		wait(sp.TargetP95Wait), present.Percent(sp.Growth), sp.Months, present.Number(sp.NewDemand, 1), present.Count(sp.LeadTimeMonths, "month", "months"))
}

// replayWords describes the replay and its calibration.
func replayWords(sp *capacity.SimPlan) string {
	w := fmt.Sprintf("The month's jobs were replayed through a model of Slurm's scheduler from %s to %s (cluster from %s), %s, %s of %s in all.",
		sp.Window.From.UTC().Format("2006-01-02 15:04"), sp.Window.To.UTC().Format("2006-01-02 15:04 UTC"), clusterSource(sp.ClusterSource),
		present.Count(sp.Seeds, "seed", "seeds"), present.Count(sp.Replays, "replay", "replays"), present.Count(sp.ReplayedJobs, "job", "jobs"))
	if c := sp.Calibration; c != nil {
		quality := "good"
		if !c.Reliable {
			quality = "poor"
			if len(c.Problems) > 0 {
				quality += " (" + strings.Join(c.Problems, "; ") + ")"
			}
		}
		w += fmt.Sprintf(" Replaying today's cluster against what happened (%s): start-order rank correlation %s, p95 waits within ±%s of the observed; the calibration is %s.",
			present.Count(c.Jobs, "job", "jobs"), present.Number(c.RankCorrelation, 2), wait(sp.CalibrationError), quality)
	}
	return w
}

func clusterSource(s string) string {
	switch {
	case s == "":
		return "the inventory"
	case strings.HasPrefix(s, "profiles"):
		return "the " + s
	}
	return s
}

// wait prints a replayed wait, given in seconds, rounded to the second
// as the verdict's words are ("2h" for 7199.6 s, not "1h59m").
func wait(v float64) string { return present.Seconds(math.Round(v)) }

// spread prints a wait spread in seconds: "3h46m (3h39m–5h16m)".
func spread(s analysis.Spread) string {
	return wait(s.Median) + " (" + wait(s.P10) + "–" + wait(s.P90) + ")"
}

// freeWords names the free changes applied, or says there are none.
func freeWords(sp *capacity.SimPlan) string {
	if len(sp.Free) == 0 {
		return "no policy change applied"
	}
	return present.List(sp.Free) + " applied"
}

// whatifSection shows what the replay found: the free changes, the
// purchase per model with its chart, the timeline, the costs, and the
// cross-check by averages.
func whatifSection(d *Data) section {
	s := section{ID: "whatif", Title: "What buying or changing would do"}
	sp := d.SimPlan
	switch {
	case sp == nil:
		s.para("Not simulated: no queue replay ran for this report, so what a change or a purchase would do to the queue is not known.")
		s.chart(chartPlan)
	case !sp.Simulated:
		why := sp.NotSimulated
		if why == "" {
			why = strings.TrimSuffix(sp.Verdict.Text, ".")
		}
		s.para("Not simulated: %s. What a change or a purchase would do to the queue is not known.", strings.TrimSuffix(why, "."))
		s.chart(chartPlan)
	default:
		effectsBlock(&s, d, sp)
		purchaseBlock(&s, sp)
		timelineBlock(&s, sp)
		costBlock(&s, sp)
		if len(sp.Assumed) > 0 {
			s.para("The replay assumed:")
			s.list(sp.Assumed)
		}
		if sp.NotSimulated != "" {
			s.para("Part of the plan was not simulated: %s.", strings.TrimSuffix(sp.NotSimulated, "."))
		}
	}
	crossCheckBlock(&s, d)
	return s
}

// effectsBlock is (1): each recommendation replayed alone.
func effectsBlock(s *section, d *Data, sp *capacity.SimPlan) {
	s.heading("1. Policy changes first: each recommendation replayed alone at today's load")
	if len(sp.Effects) == 0 {
		s.para("No recommendation to replay: no rule found a change to make.")
		return
	}
	s.para("Each recommendation is applied alone to today's cluster and replayed at today's load: the median of %s, with the p10–p90 of the seeds after the change. A change helps when the p95 or the mean wait of the jobs it is about falls by more than the larger of 1 minute and 10 %%; it is harmful when the mean wait of all GPU jobs rises by as much. The changes that help cost nothing and are applied before any purchase.", present.Count(sp.Seeds, "seed", "seeds"))
	titles := map[string]string{}
	for _, r := range d.Findings.Recommendations {
		titles[r.ID] = r.Title
	}
	t := newTable("ID", "Recommendation", "Jobs measured", "#Jobs", "#Replayed p95 wait before", "#Replayed p95 wait after (p10–p90)", "#Replayed mean wait of all GPU jobs", "Outcome")
	for _, e := range sp.Effects {
		title := titles[e.ID]
		if !e.Simulated {
			why := "not simulated"
			if e.Why != "" {
				why += ": " + e.Why
			}
			t.row(e.ID, title, dash, dash, dash, dash, dash, why)
			continue
		}
		t.row(e.ID, title, e.Group, present.Int(e.Jobs), wait(e.Before.WaitP95.Median), spread(e.After.WaitP95),
			wait(e.AllFrom.WaitMean.Median)+" → "+wait(e.AllTo.WaitMean.Median), analysis.OutcomeWords(e.Outcome))
	}
	s.table(t)
	if len(sp.Free) > 0 {
		s.para("Applied before any purchase: %s.", present.List(sp.Free))
	} else {
		s.para("No change helps enough to apply: the purchase search starts from today's rules.")
	}
}

// purchaseBlock is (2): the smallest purchase per model, and its chart.
func purchaseBlock(s *section, sp *capacity.SimPlan) {
	s.heading(fmt.Sprintf("2. Then the smallest purchase per GPU model at the %d-month horizon", sp.Months))
	if len(sp.Models) == 0 {
		s.para("No GPU model was searched: the replay found no model with jobs.")
		s.chart(chartPlan)
		return
	}
	s.para("With %s, purchase sizes of each GPU model are tried (doubling, then bisecting) for the smallest that brings the model's p95 wait under the %s target at the horizon's load, the models furthest over the target first, each on top of the purchases found before it.",
		freeWords(sp), wait(sp.TargetP95Wait))
	t := newTable("GPU model", "#GPUs now", "#Replayed p95 wait today", "#Replayed p95 wait at the horizon (p10–p90)", "Buy", "Replayed p95 wait by GPUs added")
	placed := false
	for _, m := range sp.Models {
		today, hz, name := dash, dash, m.Model
		if sp.Today != nil {
			for _, g := range sp.Today.Models {
				if g.Name == m.Model {
					today = wait(g.WaitP95.Median)
					switch {
					case g.PlacedOnly():
						name += " (untyped jobs placed by the replay)"
					case g.Placed():
						name += " (with untyped jobs placed by the replay)"
					}
					placed = placed || g.Placed()
				}
			}
		}
		if len(m.Curve) > 0 && m.Curve[0].Added == 0 {
			hz = m.Curve[0].WaitText(spread(m.Curve[0].ModelP95))
		}
		buy := sp.Jobs.NoPurchaseWords()
		switch {
		case m.Needed > 0:
			buy = fmt.Sprintf("%s more", present.Int(m.Needed))
		case m.Needed < 0:
			buy = "no size meets the target"
			if m.Why != "" {
				buy += ": " + m.Why
			}
		}
		var pts []string
		for _, c := range m.Curve {
			pts = append(pts, fmt.Sprintf("+%d: %s", c.Added, c.WaitText(wait(c.ModelP95.Median))))
		}
		curve := strings.Join(pts, ", ")
		if curve == "" {
			curve = dash
		}
		t.row(name, present.Int(m.GPUs), today, hz, buy, curve)
	}
	s.table(t)
	if placed {
		s.para("Jobs that asked for no GPU type and could run on more than one model are placed by the replay on the first nodes that fit, in node order: which of those models they ran on, and so that model's waits, is the replay's placement, not a demand for the model. Their waits count in their partitions: a model that took only such jobs is sized on the worst p95 wait of its partitions (its row shows that wait), and no verdict names it as the worst.")
	}
	s.chart(chartPlan)
}

// timelineBlock is (3): when growth breaks the target with no purchase.
func timelineBlock(s *section, sp *capacity.SimPlan) {
	s.heading("3. Without a purchase: when growth breaks the target")
	tl := sp.Timeline
	if tl == nil {
		s.para("The timeline was not searched.")
		return
	}
	t := newTable("Quantity", "Value")
	rules := "today's, with " + present.List(sp.Free) + " applied"
	if len(sp.Free) == 0 {
		rules = "today's, no policy change applied"
	}
	t.row("Rules", rules)
	t.row("Growth of demand", present.Percent(sp.Growth)+" a year")
	switch {
	case tl.BreachMonth == 0:
		t.row("First month that misses the target", "missed already, at today's load")
		t.row("First to miss it", tl.Group+": replayed p95 wait "+tl.WaitText(spread))
		t.row("Order by (lead time "+present.Count(sp.LeadTimeMonths, "month", "months")+")", "now: the target is missed already")
	case tl.BreachMonth > 0:
		t.row("First month that misses the target", fmt.Sprintf("month %d after the window (%s)", tl.BreachMonth, tl.BreachDate.Format("2006-01")))
		t.row("First to miss it", tl.Group+": replayed p95 wait "+tl.WaitText(spread))
		order := tl.OrderBy.Format("2006-01-02")
		if tl.Late {
			order += " (already past: order now)"
		}
		t.row("Order by (lead time "+present.Count(sp.LeadTimeMonths, "month", "months")+")", order)
	default:
		t.row("First month that misses the target", "none: the target holds for the "+present.Count(tl.SearchedMonths, "month", "months")+" searched")
		t.row("Order by (lead time "+present.Count(sp.LeadTimeMonths, "month", "months")+")", "no order needed within the "+present.Count(tl.SearchedMonths, "month", "months")+" searched")
	}
	s.table(t)
	s.para("The breach month is the first month whose load, (1 + growth)^(month/12) times the window's with the new demand phased in, makes some partition or GPU model miss the target in the replay; the order-by date is the breach date less the lead time (plan.lead_time_months).")
}

// costBlock is (4): buying against renting the purchase's work.
func costBlock(s *section, sp *capacity.SimPlan) {
	if len(sp.Purchase) == 0 {
		return
	}
	s.heading("4. Buy or rent the purchase's work")
	if len(sp.Costs) == 0 {
		s.para("No prices are configured for the models to buy ([[plan.prices]]), so buying and renting are not compared.")
		return
	}
	t := newTable("GPU model", "#GPUs", "#Owned per year", "#Busy GPU-hours per year", "#Utilisation", "#Rent per year", "#Break-even utilisation", "Cheaper")
	for _, c := range sp.Costs {
		t.row(c.Model, present.Int(c.GPUs), present.Amount(c.OwnedPerYear), present.GPUHours(c.BusyHoursPerYear), present.Percent(c.Utilisation), present.Amount(c.RentPerYear), present.Percent(c.BreakEven), c.Cheaper)
	}
	s.table(t)
	years := 0.0
	if len(sp.Costs) > 0 {
		years = sp.Costs[0].DepreciationYears
	}
	s.para("Amounts are in the prices' currency. Owning costs GPUs × (purchase price / %s depreciation years + running cost a year); renting costs the added GPUs' busy hours in the replay at the horizon, scaled to a year, at the cloud price per GPU-hour. Owning is cheaper above the break-even utilisation, (purchase / years + running) / (8,760 h × cloud price per hour).", present.Number(years, 1))
}

// crossCheckBlock is Little's law on the month's averages.
func crossCheckBlock(s *section, d *Data) {
	s.heading("Cross-check by averages (Little's law)")
	s.para("Little's law works from averages (arrival rate λ, mean run time S, mean GPUs per job): it ignores when demand arrives, so it cannot see the queues of peak hours, and it is not the verdict. It checks the replay's order of magnitude.")
	p := d.Findings.Plan
	if p.Constraint == analysis.ConstraintNoData || p.Constraint == "" || p.PeriodHours <= 0 {
		if p.CrossCheck != "" {
			s.para("%s", p.CrossCheck)
		} else {
			s.para("No GPU jobs with a known start to average over.")
		}
		return
	}
	if len(p.Classes) > 0 {
		ct := newTable("Task class", "#Jobs", "#λ (jobs/h)", "#S (h)", "#GPUs per job", "#L = λ·S·GPUs", "#Peak GPUs")
		for _, l := range p.Classes {
			if l.Jobs == 0 { // a class no job fell in is no row
				continue
			}
			ct.row(words(l.Class.String()), present.Int(l.Jobs), present.Number(l.ArrivalRate, 3), present.Number(l.ServiceTime, 2), present.Number(l.MeanGPUs, 2), present.Number(l.Concurrency, 2), present.GPUsHeld(l.PeakGPUs))
		}
		if len(ct.Rows) > 0 {
			s.table(ct)
		}
	}
	t := newTable("Quantity", "#Value")
	t.row("GPUs allocated on average now (C_now = Σ L)", present.Number(p.CNow, 1))
	t.row("Most GPUs held at once", present.GPUsHeld(p.PeakGPUs))
	t.row(fmt.Sprintf("Demand in %s (C_future; growth %s a year, %s GPUs of new demand)", present.Count(p.Params.Months, "month", "months"), present.Percent(p.Params.Growth), present.Number(p.Params.NewDemand, 1)), present.Number(p.CFuture, 1))
	t.row(fmt.Sprintf("GPUs needed (keeping %s free)", present.Percent(p.Params.Headroom)), present.Int(p.GPUsNeeded))
	if p.CurrentGPUs > 0 {
		t.row("GPUs in the inventory now", present.Int(p.CurrentGPUs))
	} else {
		t.row("GPUs in the inventory now", "unknown (no inventory)")
	}
	if p.Scaling.Valid {
		t.row("Multi-GPU scaling efficiency ("+present.Count(p.Scaling.Tasks, "task", "tasks")+")", present.Percent(p.Scaling.Efficiency))
	}
	s.table(t)
	var cs []string
	for _, c := range p.Constraints {
		if c != analysis.ConstraintNone {
			cs = append(cs, constraintWords(c))
		}
	}
	if len(cs) > 0 {
		s.para("What the month's averages and shares of GPU-hours point at: %s.", strings.Join(cs, "; "))
	}
	s.list(reasons(p.Evidence))
	if p.CrossCheck != "" {
		s.para("%s", p.CrossCheck)
	}
}

// constraintWords names a constraint the cross-check's averages show. It
// is not a verdict: the verdict is the simulated plan's.
func constraintWords(c string) string {
	switch c {
	case analysis.ConstraintNone:
		return "no constraint by averages"
	case analysis.ConstraintGPUs:
		return "GPU count"
	case analysis.ConstraintMemory:
		return "GPU memory"
	case analysis.ConstraintStorage:
		return "storage bandwidth"
	case analysis.ConstraintScheduling:
		return "scheduling policy (idle and unused allocations), not hardware"
	case analysis.ConstraintNoData:
		return "not enough data"
	}
	return words(c)
}

// planHeadline adds the plan's answer to the headline numbers: the
// verdict, the demand growth it used and where that came from, and the
// order-by date.
func planHeadline(t *table, sp *capacity.SimPlan) {
	if sp == nil {
		return
	}
	verdict := string(sp.Verdict.Code)
	if len(sp.Purchase) > 0 {
		var buy []string
		for _, p := range sp.Purchase {
			buy = append(buy, present.Int(p.GPUs)+" "+p.Model)
		}
		verdict = "buy " + strings.Join(buy, " and ")
	}
	if verdict == "" {
		verdict = "none"
	}
	t.row("Capacity plan verdict", verdict)
	if g := sp.GrowthEstimate; g != nil {
		src := map[string]string{"trend": "estimated from the site's own months", "set": "as configured",
			"few_months":    "the configured default: too few whole months to estimate",
			"too_uncertain": "the configured default: the site's own trend is too uncertain to plan on"}[g.Reason]
		v := present.Percent(g.Used) + " a year, " + src
		switch g.Reason {
		case "trend":
			v += fmt.Sprintf(" (95 %% interval %s to %s, %d months)", present.Percent(g.Low), present.Percent(g.High), len(g.Months))
		case "too_uncertain":
			v += fmt.Sprintf(" (estimated %s a year, 95 %% interval %s to %s, %d months)", present.Percent(g.Annual), present.Percent(g.Low), present.Percent(g.High), len(g.Months))
		}
		t.row("Demand growth planned for", v)
		if len(g.Models) > 0 {
			parts := make([]string, len(g.Models))
			for i, m := range g.Models {
				why := map[string]string{"trend": fmt.Sprintf("its own trend, %d months", m.Months), "set": "as configured",
					"few_months":    fmt.Sprintf("the cluster's: %d of %d months needed", m.Months, analysis.MinGrowthMonths),
					"too_uncertain": fmt.Sprintf("the cluster's: its own %s too uncertain", present.Percent(m.Annual))}[m.Reason]
				parts[i] = fmt.Sprintf("%s %s (%s)", m.Model, present.Percent(m.Used), why)
			}
			t.row("Demand growth per GPU model", strings.Join(parts, "; "))
		}
	} else if sp.Simulated {
		t.row("Demand growth planned for", present.Percent(sp.Growth)+" a year")
	}
	if tl := sp.Timeline; tl != nil {
		switch {
		case tl.BreachMonth < 0:
			t.row("Order GPUs by", "no order needed within the "+present.Count(tl.SearchedMonths, "month", "months")+" searched")
		case tl.Late:
			t.row("Order GPUs by", "now (the target is missed by "+tl.BreachDate.Format("2006-01")+")")
		default:
			t.row("Order GPUs by", tl.OrderBy.Format("2006-01-02")+" (the target is missed from "+tl.BreachDate.Format("2006-01")+")")
		}
	}
}
