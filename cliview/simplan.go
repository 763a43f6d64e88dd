package cliview

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/capacity"
	"github.com/gpuprof/gpuprof/internal/present"
	"github.com/gpuprof/gpuprof/internal/texttable"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/termtext"
)

// WriteSimPlan writes the simulated plan: its verdict first, then the free
// changes, the purchase per model, the timeline and the costs. It is the
// page read top to bottom, each part in the order `gpuprof plan` prints it
// and docs/whatif.md describes, with nothing computed in it (every number
// is the plan's, in the presenter's form); the two tables of parts 1 and
// 2 are written by writeEffects and writePurchase.
func WriteSimPlan(w io.Writer, sp capacity.SimPlan, recs []analysis.Recommendation) {
	WriteConfNote(w, sp.Conf)
	if sp.Conf.Cluster != "" {
		printf(w, "Cluster %s; GPU inventory: %s.\n", termtext.Short(sp.Conf.Cluster, 64), termtext.Short(sp.Inventory.Words(), 600))
	}
	printf(w, "Capacity plan: target p95 wait ≤ %s in every partition and GPU model; growth %s a year, horizon %d %s, new demand %g %s, lead time %d %s.\n",
		present.Seconds(sp.TargetP95Wait), present.Percent(sp.Growth), sp.Months, present.Plural(sp.Months, "month", "months"),
		sp.NewDemand, map[bool]string{true: "GPU", false: "GPUs"}[sp.NewDemand == 1], sp.LeadTimeMonths, present.Plural(sp.LeadTimeMonths, "month", "months"))
	if g := sp.GrowthEstimate; g != nil {
		printf(w, "%s\n", termtext.Short(g.Text, 1200))
	}
	if sp.Simulated {
		c := sp.Calibration
		quality := "good"
		if c != nil && !c.Reliable {
			quality = "POOR — " + strings.Join(c.Problems, "; ")
		}
		jobs, rank := 0, 0.0
		if c != nil {
			jobs, rank = c.Jobs, c.RankCorrelation
		}
		printf(w, "Replayed %s to %s (%s) with %d seeds, %d replays (%d scheduler steps); calibration on %d %s: rank correlation %.2f, p95 waits within ±%s; %s.\n",
			slurmext.FormatTime(sp.Window.From, nil), slurmext.FormatTime(sp.Window.To, nil), sp.ClusterSource,
			sp.Seeds, sp.Replays, sp.Steps, jobs, present.Plural(jobs, "job", "jobs"), rank, present.Seconds(sp.CalibrationError), quality)
		if c != nil {
			for _, u := range c.Unreproduced {
				printf(w, "Not reproduced: %s.\n", termtext.Short(u, 400))
			}
		}
	}
	if lo := sp.Jobs.LeftOutWords(); lo != "" && sp.Simulated {
		printf(w, "Left out: %s\n", termtext.Short(lo, 2000))
	}
	v := sp.Verdict
	printf(w, "\nVerdict: %s\n", termtext.Clean(v.Text))
	if b := termtext.Short(v.BindingWords(), 120); b != "" {
		printf(w, "Binding constraint: %s\n", b)
	}
	for _, e := range v.Evidence {
		printf(w, "- %s\n", termtext.Clean(e))
	}
	if !sp.Simulated {
		return
	}
	writeEffects(w, sp, recs)
	free := "no policy change"
	if len(sp.Free) > 0 {
		free = strings.Join(sp.Free, ", ") + " applied"
	}
	writePurchase(w, sp, free)
	if tl := sp.Timeline; tl != nil {
		printf(w, "\n3. Without a purchase (%s): ", free)
		switch {
		case tl.BreachMonth == 0:
			printf(w, "the target is missed already (%s, p95 %s).\n", tl.Group, tl.WaitText(durSpread))
		case tl.BreachMonth > 0:
			printf(w, "growth breaks the target in month %d (%s; %s p95 %s); order by %s (lead time %d months)%s.\n",
				tl.BreachMonth, tl.BreachDate.Format("2006-01"), tl.Group, tl.WaitText(durSpread), tl.OrderBy.Format("2006-01-02"),
				sp.LeadTimeMonths, map[bool]string{true: ", already past: order now", false: ""}[tl.Late])
		default:
			printf(w, "the target holds for the %d months searched.\n", tl.SearchedMonths)
		}
	}
	if len(sp.Costs) > 0 {
		printf(w, "\n4. Buy or rent the purchase's work (per year; purchase written off over the depreciation years)\n")
		tw := texttable.New("MODEL", "GPUS", "OWNED/YEAR", "BUSY GPU-H/YEAR", "UTILISATION", "RENT/YEAR", "BREAK-EVEN UTILISATION", "CHEAPER")
		for _, c := range sp.Costs {
			tw.Row(termtext.Short(c.Model, 40), strconv.Itoa(c.GPUs), present.Amount(c.OwnedPerYear), present.GPUHours(c.BusyHoursPerYear),
				present.Percent(c.Utilisation), present.Amount(c.RentPerYear), present.Percent(c.BreakEven), c.Cheaper)
		}
		_ = tw.Write(w)
	}
	if len(sp.Assumed) > 0 {
		printf(w, "\nAssumed: %s\n", strings.Join(sp.Assumed, "; "))
	}
	if sp.NotSimulated != "" {
		printf(w, "Not simulated: %s\n", sp.NotSimulated)
	}
}

// writeEffects writes part 1 of the simulated plan: each recommended
// policy change replayed alone at today's load, or that there was none to
// replay (the part is there either way, so that the numbering stays).
func writeEffects(w io.Writer, sp capacity.SimPlan, recs []analysis.Recommendation) {
	if len(sp.Effects) > 0 {
		printf(w, "\n1. Policy changes, each replayed alone at today's load (median of the seeds; p10–p90)\n")
		tw := texttable.New("ID", "RECOMMENDATION", "JOBS MEASURED", "P95 WAIT BEFORE", "AFTER", "ALL JOBS' MEAN WAIT", "OUTCOME")
		for i, e := range sp.Effects {
			title := ""
			if i < len(recs) {
				title = termtext.Short(recs[i].Title, 60)
			}
			if !e.Simulated {
				tw.Row(e.ID, title, "–", "–", "–", "–", "not simulated: "+e.Why)
				continue
			}
			tw.Row(e.ID, title, fmt.Sprintf("%s (%d)", e.Group, e.Jobs),
				present.Seconds(e.Before.WaitP95.Median), durSpread(e.After.WaitP95),
				present.Seconds(e.AllFrom.WaitMean.Median)+" → "+present.Seconds(e.AllTo.WaitMean.Median), analysis.OutcomeWords(e.Outcome))
		}
		_ = tw.Write(w)
	} else {
		// The section is there either way, as in the report: its numbering
		// stays the same.
		printf(w, "\n1. Policy changes: no recommendation to replay (no rule found a change to make).\n")
	}
}

// writePurchase writes part 2 of the simulated plan: per GPU model, the
// replayed p95 wait today and at the horizon (free, the changes applied),
// the GPUs to buy and the wait at each size the search tried.
func writePurchase(w io.Writer, sp capacity.SimPlan, free string) {
	printf(w, "\n2. Purchase per GPU model at the %d-month horizon, %s (target %s)\n", sp.Months, free, present.Seconds(sp.TargetP95Wait))
	tw := texttable.New("MODEL", "GPUS", "REPLAYED P95 WAIT TODAY", "AT THE HORIZON", "BUY", "REPLAYED P95 WAIT BY GPUS ADDED")
	for _, m := range sp.Models {
		today, hz, label := "–", "–", termtext.Short(m.Model, 40)
		if g := modelGroup(sp.Today, m.Model); g != nil {
			today = present.Seconds(g.WaitP95.Median)
			label = modelLabel(analysis.Group{Name: termtext.Short(m.Model, 40), Demand: g.Demand, Placeable: g.Placeable})
		}
		if len(m.Curve) > 0 {
			hz = m.Curve[0].WaitText(durSpread(m.Curve[0].ModelP95))
		}
		buy := sp.Jobs.NoPurchaseWords()
		switch {
		case m.Needed > 0:
			buy = "+" + strconv.Itoa(m.Needed)
		case m.Needed < 0:
			buy = "no size meets it: " + m.Why
		}
		var pts []string
		for _, c := range m.Curve {
			pts = append(pts, "+"+strconv.Itoa(c.Added)+" "+c.WaitText(present.Seconds(c.ModelP95.Median)))
		}
		tw.Row(label, strconv.Itoa(m.GPUs), today, hz, buy, strings.Join(pts, ", "))
	}
	_ = tw.Write(w)
}

// modelGroup is the group of a GPU model in a scenario, nil if none.
func modelGroup(sc *capacity.Scenario, model string) *analysis.Group {
	if sc == nil {
		return nil
	}
	for i := range sc.Models {
		if sc.Models[i].Name == model {
			return &sc.Models[i]
		}
	}
	return nil
}
