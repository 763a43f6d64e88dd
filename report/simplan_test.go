package report

import (
	"encoding/json"
	"html"
	"regexp"
	"strings"
	"testing"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/capacity"
)

// section returns the text of the section titled title in Markdown, up
// to the next section.
func mdSection(t *testing.T, md, title string) string {
	t.Helper()
	i := strings.Index(md, "\n## "+title+"\n")
	if i < 0 {
		t.Fatalf("Markdown has no section %q", title)
	}
	rest := md[i+1:]
	if j := strings.Index(rest[3:], "\n## "); j >= 0 {
		rest = rest[:j+3]
	}
	return rest
}

// htmlSection returns the HTML of the section with id.
func htmlSection(t *testing.T, page, id string) string {
	t.Helper()
	i := strings.Index(page, `<section id="`+id+`">`)
	if i < 0 {
		t.Fatalf("HTML has no section %q", id)
	}
	rest := page[i:]
	return rest[:strings.Index(rest, "</section>")]
}

// jsonPlan is the part of the JSON report's simulated plan the tests
// read.
type jsonPlan struct {
	SimulatedPlan *struct {
		Simulated    bool   `json:"simulated"`
		NotSimulated string `json:"not_simulated"`
		Verdict      struct {
			Code     string   `json:"code"`
			Text     string   `json:"text"`
			Evidence []string `json:"evidence"`
		} `json:"verdict"`
		Models []struct {
			Model string `json:"model"`
			Curve []struct {
				Added    int `json:"added"`
				ModelP95 struct {
					Median float64 `json:"median"`
				} `json:"model_p95_s"`
			} `json:"curve"`
		} `json:"models"`
		Costs []struct {
			Model   string `json:"model"`
			Cheaper string `json:"cheaper"`
		} `json:"costs"`
	} `json:"simulated_plan"`
	Plan struct {
		Constraint string `json:"constraint"`
		CrossCheck string `json:"cross_check"`
	} `json:"plan"`
	Recommendations []struct {
		ID        string `json:"id"`
		Simulated *struct {
			Outcome string `json:"outcome"`
			Text    string `json:"text"`
		} `json:"simulated"`
	} `json:"recommendations"`
	Missing []string `json:"missing"`
}

func decodePlan(t *testing.T, js string) jsonPlan {
	t.Helper()
	var v jsonPlan
	if err := json.Unmarshal([]byte(js), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestSimulatedPlanSection renders fixture's hand-built plan: the verdict
// first, in the same words in every format; the free changes, the
// purchase per model with its chart, the timeline, the costs and the
// cross-check by averages under "What buying or changing would do".
func TestSimulatedPlanSection(t *testing.T) {
	d := fixture()
	sp := d.SimPlan
	out := renderAll(t, d)
	md, page := out["md"], out["html"]

	// The verdict's text, the same string in all three formats.
	text := sp.Verdict.Text
	plan := mdSection(t, md, "Capacity plan")
	if !strings.HasPrefix(plan, "## Capacity plan\n\nVerdict: "+escapeMarkdown(text)+"\n") {
		t.Errorf("Markdown's plan does not start with the verdict's text:\n%.600s", plan)
	}
	hp := htmlSection(t, page, "plan")
	if !strings.Contains(html.UnescapeString(hp), "<p>Verdict: "+text+"</p>") {
		t.Errorf("HTML's plan lacks the verdict's text:\n%.600s", hp)
	}
	js := decodePlan(t, out["json"])
	if js.SimulatedPlan == nil || js.SimulatedPlan.Verdict.Text != text || js.SimulatedPlan.Verdict.Code != capacity.VerdictBuy {
		t.Fatalf("JSON simulated_plan.verdict = %+v, want code buy and the text %q", js.SimulatedPlan, text)
	}
	if js.Plan.Constraint != analysis.ConstraintMemory || js.Plan.CrossCheck == "" {
		t.Errorf("JSON plan (the cross-check) = %+v, want constraint and cross_check", js.Plan)
	}
	for _, want := range []string{"Binding constraint: GPU model NVIDIA H100 80GB HBM3.", escapeMarkdown(sp.Verdict.Evidence[1])} {
		if !strings.Contains(plan, want) {
			t.Errorf("Markdown's plan lacks %q", want)
		}
	}
	// No code in prose, no "no change needed" above the recommendations,
	// and the cross-check is not a verdict.
	before := md[:strings.Index(md, "\n## Recommendations\n")]
	for _, bad := range []string{"Verdict: buy", "more\\_gpus", "gpus\\_with\\_more\\_memory", "Verdict: GPUs with more memory", "meet the demand"} {
		if strings.Contains(before, bad) {
			t.Errorf("Markdown above the recommendations says %q", bad)
		}
	}
	if regexp.MustCompile(`(?i)no change (is )?needed|no purchase or policy change`).MatchString(before) {
		t.Error("Markdown says no change is needed above the recommendations")
	}

	w := mdSection(t, md, "What buying or changing would do")
	for _, want := range []string{
		// (a) the free changes, each with its replayed effect.
		"| R1 | Share NVIDIA H100 80GB HBM3 GPUs in 4 shards | jobs of 1 GPU or less | 600 | 02:30:00 | 02:29:10 (02:14:15–02:44:05) | 00:30:00 → 00:29:50 | no material change in waits; not applied |",
		"| R2 | Account bio holds idle GPUs | the other GPU jobs | 800 | 03:00:00 | 02:00:00 (01:48:00–02:12:00) | 00:30:00 → 00:20:00 | helps: applied before any purchase |",
		"Applied before any purchase: R2.",
		// (b) the purchase per model.
		"| NVIDIA H100 80GB HBM3 | 24 | 03:00:00 | 05:10:00 (04:23:30–06:12:00) | 4 more | \\+0: 05:10:00, +1: 03:00:00, +2: 01:40:00, +3: 01:05:00, +4: 00:48:00 |",
		"| NVIDIA A100-SXM4-40GB | 8 | 00:20:00 | 00:40:00 (00:34:00–00:48:00) | none needed | \\+0: 00:40:00 |",
		// (c) the timeline.
		"| First month that misses the target | month 7 after the window (2027-07) |",
		"| First to miss it | partition gpu: replayed p95 wait 01:20:00 (01:10:00–01:30:00) |",
		"| Order by (lead time 3 months) | 2027-04-01 |",
		// (d) the costs.
		"| NVIDIA H100 80GB HBM3 | 4 | 36,000 | 19,272 | 55.0 % | 57,816 | 34.2 % | buy |",
		// (e) the cross-check, labelled as averages.
		"### Cross-check by averages (Little's law)",
		"cannot see the queues of peak hours",
		"| GPUs needed (keeping 20.0 % free) | 35 |",
	} {
		if !strings.Contains(w, want) {
			t.Errorf("What buying or changing would do lacks %q", want)
		}
	}
	order := []string{"### 1\\. Policy changes first", "### 2\\. Then the smallest purchase", "### 3\\. Without a purchase", "### 4\\. Buy or rent", "### Cross-check by averages"}
	pos := 0
	for _, h := range order {
		i := strings.Index(w[pos:], h)
		if i < 0 {
			t.Errorf("heading %q missing or out of order", h)
			continue
		}
		pos += i
	}

	// The recommendations print their simulated effect.
	recs := mdSection(t, md, "Recommendations")
	for _, r := range d.Findings.Recommendations {
		if !strings.Contains(recs, escapeMarkdown(r.Simulated.Text)) {
			t.Errorf("recommendation %s lacks its simulated effect %q", r.ID, r.Simulated.Text)
		}
	}
	if strings.Contains(recs, "Expected effect (not simulated)") {
		t.Error("a simulated recommendation prints the rule's estimate as its effect")
	}
	for _, r := range js.Recommendations {
		if r.Simulated == nil || r.Simulated.Text == "" {
			t.Errorf("JSON recommendation %s has no simulated effect", r.ID)
		}
	}

	// The chart: one series per model, the target line, the calibration
	// band, labelled axes.
	clean := cleanData(d)
	cs, err := charts(&clean)
	if err != nil {
		t.Fatal(err)
	}
	svg := string(cs[chartPlan].SVG)
	if svg == "" {
		t.Fatalf("no plan chart: %s", cs[chartPlan].Empty)
	}
	for _, want := range []string{
		"NVIDIA H100 80GB HBM3 (+4 meets it)", "NVIDIA A100-SXM4-40GB",
		"target: p95 ≤ " + wait(3600), "± calibration error " + wait(360), "GPUs of the model added", "p95 wait, hours", "+4",
	} {
		if !strings.Contains(html.UnescapeString(svg), want) {
			t.Errorf("plan chart lacks %q", want)
		}
	}
	if !strings.Contains(svg, "stroke-dasharray") {
		t.Error("plan chart has no dashed target line")
	}
	if !regexp.MustCompile(`fill-opacity[:=]"?0\.[0-9]+`).MatchString(svg) {
		t.Error("plan chart has no translucent calibration band")
	}
	if n := strings.Count(page, `<figure id="chart-plan" class="chart">`); n != 1 {
		t.Errorf("%d plan charts in the HTML, want 1", n)
	}
	if cap := cs[chartPlan].Caption; !strings.Contains(cap, "± the calibration error "+wait(360)) || !strings.Contains(cap, "p10–p90") {
		t.Errorf("plan chart caption %q does not explain the band and whiskers", cap)
	}
	// Short waits are drawn in minutes.
	short := fixture()
	for i := range short.SimPlan.Models {
		for j := range short.SimPlan.Models[i].Curve {
			c := &short.SimPlan.Models[i].Curve[j]
			c.ModelP95 = analysis.Spread{Median: 1200, P10: 1000, P90: 1500}
		}
	}
	cs, err = charts(&short)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(cs[chartPlan].SVG), "p95 wait, minutes") {
		t.Error("a plan with waits under 2 h is not drawn in minutes")
	}
}

// TestNotSimulatedPlan: with no replay, the report says why, keeps the
// cross-check, and its missing data agree with the verdict.
func TestNotSimulatedPlan(t *testing.T) {
	c := analysis.DefaultConfig()
	// Each case is fixture's month without the replayed effects; a plan
	// made by capacity.NotSimulatedPlan gives every recommendation one
	// saying why there is none.
	plain := func() Data {
		d := fixture()
		for i := range d.Findings.Recommendations {
			d.Findings.Recommendations[i].Simulated = nil
		}
		return d
	}
	const (
		whyInventory = "no inventory: no cluster to replay on"
		whyUser      = "the plan replays every user's jobs: it is for root and admin_group only (ann sees only their own)"
	)
	noInventory := plain()
	noInventory.Workload.Headline.CapacityGPUHours = 0
	noInventory.Findings.Plan.CurrentGPUs = 0
	sp := capacity.NotSimulatedPlan(noInventory.Findings, noInventory.Findings.Plan.Params, c, whyInventory)
	noInventory.SimPlan = &sp

	user := plain()
	usp := capacity.NotSimulatedPlan(user.Findings, user.Findings.Plan.Params, c, whyUser)
	user.SimPlan = &usp

	none := plain()
	none.SimPlan = nil

	for _, tt := range []struct {
		name    string
		d       Data
		code    string
		why     string
		say     []string
		missing bool // no_inventory listed
	}{
		{"no inventory", noInventory, capacity.VerdictNoInventory, whyInventory,
			[]string{"Verdict: No inventory: cannot compare the demand with the GPUs there are", "Not simulated: no inventory"}, true},
		{"not an admin", user, capacity.VerdictNotSimulated, whyUser,
			[]string{"Verdict: Not simulated: the plan replays every user", "root and admin\\_group only"}, false},
		{"no plan", none, "", "", []string{"Verdict: none. No capacity plan was simulated", "Not simulated: no queue replay ran"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out := renderAll(t, tt.d)
			md := out["md"]
			effect := "Expected effect: not simulated (" + escapeMarkdown(tt.why) + ").\n\nRationale: about 900 GPU-hours a month freed"
			if tt.code == "" {
				effect = "Expected effect (not simulated): about 900 GPU-hours a month freed"
			}
			for _, want := range append(tt.say, "### Cross-check by averages (Little's law)", "| GPUs needed (keeping 20.0 % free) | 35 |", effect) {
				if !strings.Contains(md, want) {
					t.Errorf("Markdown lacks %q", want)
				}
			}
			if strings.Contains(md, "meet the demand") || strings.Contains(md, "### 1\\. Policy changes first") {
				t.Error("a plan without a replay shows replay results or calls the cross-check a verdict")
			}
			if !strings.Contains(out["html"], `<figure id="chart-plan" class="chart chart-empty">`) {
				t.Error("the plan chart is not an empty figure saying why")
			}
			js := decodePlan(t, out["json"])
			switch {
			case tt.code == "" && js.SimulatedPlan != nil:
				t.Errorf("JSON has a simulated_plan for a report without one: %+v", js.SimulatedPlan)
			case tt.code != "" && (js.SimulatedPlan == nil || js.SimulatedPlan.Verdict.Code != tt.code || js.SimulatedPlan.Simulated):
				t.Errorf("JSON simulated_plan = %+v, want verdict %s, not simulated", js.SimulatedPlan, tt.code)
			case tt.code != "" && !strings.Contains(md, "Verdict: "+escapeMarkdown(js.SimulatedPlan.Verdict.Text)):
				t.Errorf("Markdown's verdict is not the JSON's %q", js.SimulatedPlan.Verdict.Text)
			}
			if got := has(js.Missing, missingNoCapacity); got != tt.missing {
				t.Errorf("missing = %q: no_inventory %v, want %v (the verdict is %s)", js.Missing, got, tt.missing, tt.code)
			}
		})
	}
}

// TestEffectOutcomes: a recommendation whose replayed effect is harmful or
// nil says so; one the replay could not model keeps the rule's estimate.
func TestEffectOutcomes(t *testing.T) {
	d := fixture()
	r := &d.Findings.Recommendations[1]
	r.Simulated = &analysis.Effect{ID: r.ID, Kind: r.Kind, Outcome: analysis.EffectHarms, Simulated: true,
		Text: "Expected effect (simulated): p95 wait of the other GPU jobs 3h00m → 2h00m (p10–p90 1h48m–2h12m; calibration error ±6m); mean wait of all GPU jobs 30m → 45m: harmful, the queue as a whole waits longer; not applied in the plan."}
	d.SimPlan.Effects[1].Outcome = analysis.EffectHarms
	r0 := &d.Findings.Recommendations[0]
	r0.Simulated = &analysis.Effect{ID: r0.ID, Kind: r0.Kind, Outcome: analysis.EffectNotSimulated, Why: "the replay has no model of this change",
		Text: "Expected effect: not simulated (the replay has no model of this change)."}
	d.SimPlan.Effects[0] = *r0.Simulated
	out := renderAll(t, d)
	recs := mdSection(t, out["md"], "Recommendations")
	for _, want := range []string{
		"harmful, the queue as a whole waits longer; not applied in the plan.",
		"Expected effect: not simulated (the replay has no model of this change).\n\nRationale: about 900 GPU-hours a month freed",
	} {
		if !strings.Contains(recs, want) {
			t.Errorf("recommendations lack %q", want)
		}
	}
	w := mdSection(t, out["md"], "What buying or changing would do")
	for _, want := range []string{
		"| R1 | Share NVIDIA H100 80GB HBM3 GPUs in 4 shards | — | — | — | — | — | not simulated: the replay has no model of this change |",
		"harmful: the queue as a whole waits longer; not applied |",
	} {
		if !strings.Contains(w, want) {
			t.Errorf("effects table lacks %q", want)
		}
	}
}

// TestPlanLeftOutPurchaseRow: while jobs are left out of the replay, the
// purchase row of a model whose replayed jobs need no more GPUs names
// what the left-out jobs need, not "none needed" (issue #38 item 12).
func TestPlanLeftOutPurchaseRow(t *testing.T) {
	d := fixture()
	d.SimPlan.Jobs.LeftOut = 12
	d.SimPlan.Jobs.LeftOutReasons = []capacity.LeftOutReason{{Kind: capacity.LeftOutGPUs, Jobs: 12, Partition: "gpu", GPUType: "a100",
		Asked: 8, Have: 4, Need: "a node of 8 GPUs of type a100 in partition gpu", Hardware: true}}
	w := mdSection(t, renderAll(t, d)["md"], "What buying or changing would do")
	want := "| NVIDIA A100-SXM4-40GB | 8 | 00:20:00 | 00:40:00 (00:34:00–00:48:00) | none for the jobs replayed; the 12 jobs left out need a node of 8 GPUs of type a100 in partition gpu (12 jobs) (see Left out) |"
	if !strings.Contains(w, want) || strings.Contains(w, "none needed") {
		t.Errorf("purchase rows with jobs left out, want %q:\n%s", want, w)
	}
}
