package capacity

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
)

// The verdict, the recommendations and the hints are written by different
// code over the same month (issue #13, "What must be shown" 2).
// TestPlanNeverContradicts generates random months on random small
// clusters, records them through the queue model, and checks that the plan
// never says opposite things: "no change" above recommendations, "buy" a
// model that had a GPU free at every moment, a free change that did not
// help, internal codes in the words printed.

// internalWords must never appear in a verdict's text or evidence: they
// are the JSON's codes, not prose.
var internalWords = []string{
	analysis.ConstraintGPUs, analysis.ConstraintMemory, analysis.ConstraintNoData, analysis.ConstraintStorage, analysis.ConstraintScheduling,
	VerdictInsufficientData, VerdictNotMet, VerdictNoInventory, VerdictNotSimulated, VerdictNoChange, VerdictLeftOut,
	BindingGPUModel, BindingGPUMemory, "—",
	analysis.RecDefaultTime, analysis.RecDebugPart, analysis.RecLongQOS, analysis.RecUserLimits, analysis.RecIdleAccount, analysis.RecUserGPUs, analysis.RecUserShard, analysis.RecShards,
}

// userTitle and countOpt read a recommendation's title and a hint's
// option, as analysis's TestAdviceNeverContradicts does.
var (
	userTitle = regexp.MustCompile(`^User (\S+): asked for (\d+) GPUs?, used (none|\d+)$`)
	countOpt  = regexp.MustCompile(`^--(?:gres=gpu:|gpus=)(?:[A-Za-z0-9_.-]+:)?(\d+)$`)
)

// advice is what a job's hints say about its GPUs: none (submit without
// GPUs), fewer (a count), a shard, a larger GPU.
type advice struct{ none, fewer, shard, larger bool }

func adviceOf(hs []analysis.Hint) advice {
	var a advice
	for _, h := range hs {
		a.none = a.none || h.Rule == analysis.HintUnusedGPUs && h.Option == ""
		a.fewer = a.fewer || h.Rule == analysis.HintUnusedGPUs && countOpt.MatchString(h.Option)
		a.shard = a.shard || h.Rule == analysis.HintShard
		a.larger = a.larger || h.Rule == analysis.HintLargerGPU
	}
	return a
}

var verdictCodes = []string{VerdictInsufficientData, VerdictNoInventory, VerdictNotSimulated, VerdictNoChange, VerdictPolicy, VerdictBuy, VerdictNotMet, VerdictLeftOut}

// planContradiction returns what in the plan contradicts the rest, or "".
func planContradiction(f analysis.Findings, sp SimPlan) string {
	v := sp.Verdict
	recs := f.Recommendations
	var errs []string
	bad := func(format string, a ...any) { errs = append(errs, fmt.Sprintf(format, a...)) }
	if !slices.Contains(verdictCodes, v.Code) {
		bad("unknown verdict code %q", v.Code)
	}
	for _, s := range append([]string{v.Text}, v.Evidence...) {
		for _, w := range internalWords {
			if strings.Contains(s, w) {
				bad("verdict words %q contain the internal code %q", s, w)
			}
		}
	}
	if v.Text == "" {
		bad("verdict without words")
	}
	switch v.Code {
	case VerdictNoChange:
		if len(recs) > 0 {
			bad("no change above %d recommendations", len(recs))
		}
		if sp.Jobs.LeftOut > 0 {
			bad("no change while %d jobs could not run", sp.Jobs.LeftOut)
		}
	case VerdictLeftOut:
		if sp.Jobs.LeftOut == 0 {
			bad("left out, but no job was")
		}
		if len(sp.Purchase) > 0 {
			bad("left out with a purchase %+v", sp.Purchase)
		}
		if len(sp.Purchase) > 0 {
			bad("no change with a purchase %+v", sp.Purchase)
		}
	case VerdictPolicy:
		if len(recs) == 0 {
			bad("policy without a recommendation")
		}
		if len(sp.Purchase) > 0 {
			bad("policy with a purchase %+v", sp.Purchase)
		}
		if _, w := worstOrEmpty(sp.WithFree); w > sp.TargetP95Wait {
			bad("policy, but with the free changes the worst p95 is %.0f s, over the target", w)
		}
	case VerdictBuy:
		if len(sp.Purchase) == 0 {
			bad("buy without a purchase")
		}
		if _, w := worstOrEmpty(sp.WithPurchase); w > sp.TargetP95Wait {
			bad("buy, but with the purchase the worst p95 is %.0f s, over the target", w)
		}
	}
	if v.Code != VerdictBuy && len(sp.Purchase) > 0 && v.Code != VerdictNotMet {
		bad("verdict %s with a purchase %+v", v.Code, sp.Purchase)
	}
	// Never buy a model that had spare capacity at every moment: at the
	// horizon with the free changes, before any purchase, every GPU of a
	// model bought was busy at once for some time.
	for _, p := range sp.Purchase {
		if p.GPUs <= 0 {
			bad("a purchase of %d %s", p.GPUs, p.Model)
		}
		var g *analysis.Group
		if sp.WithFree != nil {
			for i := range sp.WithFree.Models {
				if sp.WithFree.Models[i].Name == p.Model {
					g = &sp.WithFree.Models[i]
				}
			}
		}
		if g == nil || !(g.FullHours.Median > 0) {
			bad("buys %d %s, whose GPUs were never all busy at once (%+v)", p.GPUs, p.Model, g)
		}
		i := slices.IndexFunc(sp.Models, func(m ModelPlan) bool { return m.Model == p.Model })
		if i < 0 || sp.Models[i].Needed != p.GPUs {
			bad("buys %d %s, the search for it says %+v", p.GPUs, p.Model, sp.Models)
		}
	}
	// Free changes are the ones that helped.
	for _, id := range sp.Free {
		i := slices.IndexFunc(sp.Effects, func(e analysis.Effect) bool { return e.ID == id })
		if i < 0 || sp.Effects[i].Outcome != analysis.EffectHelps {
			bad("free change %s without a helping effect", id)
		}
	}
	if sp.Simulated {
		if len(sp.Effects) != len(recs) {
			bad("%d effects for %d recommendations", len(sp.Effects), len(recs))
		}
		for _, r := range recs {
			if r.Simulated == nil || r.Simulated.ID != r.ID {
				bad("recommendation %s (%s) without its simulated effect (%+v)", r.ID, r.Kind, r.Simulated)
			} else if r.Simulated.Text == "" || !strings.HasPrefix(r.Simulated.Text, "Expected effect") {
				bad("recommendation %s: effect text %q", r.ID, r.Simulated.Text)
			}
		}
	}
	if sp.Timeline != nil && sp.Timeline.BreachMonth > 0 && sp.Timeline.OrderBy.After(sp.Timeline.BreachDate) {
		bad("order by %s after the breach %s", sp.Timeline.OrderBy, sp.Timeline.BreachDate)
	}
	return strings.Join(errs, "; ")
}

// randomCluster is 1–3 GPU models, each on 1–2 nodes of 2, 4 or 8 GPUs,
// in one partition or two (the second on the last model's nodes).
func randomCluster(r *rand.Rand) []analysis.Node {
	models := []string{h100, a100, "NVIDIA L40S"}
	r.Shuffle(len(models), func(i, j int) { models[i], models[j] = models[j], models[i] })
	models = models[:1+r.IntN(3)]
	two := r.IntN(3) == 0
	var nodes []analysis.Node
	for k, m := range models {
		parts := []string{"gpu"}
		if two && k == len(models)-1 {
			parts = append(parts, "big")
		}
		nodes = append(nodes, gpuNodes(fmt.Sprintf("n%d-", k), m, 1+r.IntN(2), []int{2, 4, 8}[r.IntN(3)], parts...)...)
	}
	return nodes
}

// randomWorkload is 60–300 jobs on the nodes: a daytime peak or not,
// typed or untyped requests, runs from minutes to hours, limits from
// close to far over, and GPUs busy, idle or small.
func randomWorkload(r *rand.Rand, nodes []analysis.Node) []plantedJob {
	n := 60 + r.IntN(240)
	peak := r.IntN(2) == 0
	users := []string{"u0", "u1", "u2", "u3", "u4", "u5"}[:2+r.IntN(5)]
	var pjs []plantedJob
	for range n {
		nd := nodes[r.IntN(len(nodes))]
		typ := ""
		if r.IntN(2) == 0 {
			typ = analysis.GRESType(nd.GPUModel)
		}
		part := "gpu"
		if len(nd.Partitions) > 1 && r.IntN(2) == 0 {
			part = "big"
		}
		day := monthFrom.AddDate(0, 0, r.IntN(30))
		at := day.Add(minutes(r, 0, 24*60-1))
		if peak && r.IntN(2) == 0 {
			at = day.Add(9*time.Hour + minutes(r, 0, 180))
		}
		run := []time.Duration{minutes(r, 2, 25), minutes(r, 30, 180), minutes(r, 240, 720)}[r.IntN(3)]
		limit := time.Duration(float64(run)*[]float64{1.1, 1.5, 2, 8, 30}[r.IntN(5)]).Round(time.Minute) + time.Minute
		util, vram := 40+55*r.Float64(), 0.2+0.7*r.Float64()
		switch r.IntN(6) {
		case 0:
			util = r.Float64() * 4 // idle
		case 1:
			util, vram = 5+20*r.Float64(), 0.05+0.15*r.Float64() // small and quiet
		}
		pjs = append(pjs, plantedJob{at: at, run: run, limit: limit, gpus: 1 + r.IntN(min(nd.GPUs, 4)), typ: typ, part: part,
			user: users[r.IntN(len(users))], util: util, vramFrac: vram})
	}
	return pjs
}

func TestPlanNeverContradicts(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 13))
	months := 50
	if testing.Short() {
		months = 20
	}
	c := planConfig(2)
	seen := map[string]int{}
	for month := range months {
		nodes := randomCluster(r)
		in := recordMonth(t, nodes, randomWorkload(r, nodes))
		pp := analysis.PlanParams{Growth: []float64{0, 0.3, 1}[r.IntN(3)], Months: []int{0, 6, 12}[r.IntN(3)]}
		f, sp := simulate(t, in, c, pp)
		seen[sp.Verdict.Code]++
		for _, e := range sp.Effects {
			seen["effect "+e.Outcome]++
		}
		where := fmt.Sprintf("month %d (%d jobs, %d nodes, growth %.1f over %d months)", month, len(in.Jobs), len(nodes), pp.Growth, pp.Months)
		checkPlan(t, where, f, sp)
		// The hints on each job never say opposite things, and a user told
		// to submit without GPUs has jobs hinted so.
		noneHints := map[string]int{}
		for _, j := range in.Jobs {
			a := adviceOf(analysis.Hints(j, c, analysis.GPUTypes(in.Nodes)))
			if a.none && (a.fewer || a.shard || a.larger) || a.shard && a.larger {
				t.Errorf("%s, job %s: hints contradict: %+v", where, j.ID, a)
			}
			if a.none {
				noneHints[j.User]++
			}
		}
		for _, rec := range f.Recommendations {
			if m := userTitle.FindStringSubmatch(rec.Title); m != nil && m[3] == "none" && noneHints[m[1]] == 0 {
				t.Errorf("%s: %q, but no job of %s was hinted to run without GPUs", where, rec.Title, m[1])
			}
		}
		if t.Failed() {
			t.Fatalf("stopped at %s", where)
		}
	}
	t.Logf("verdicts and effects over %d random months: %v", months, seen)
	for _, code := range []string{VerdictNoChange, VerdictPolicy, VerdictBuy} {
		if seen[code] == 0 {
			t.Errorf("no random month gave the verdict %s: the generator no longer reaches it", code)
		}
	}
}
