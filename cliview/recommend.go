package cliview

import (
	"io"
	"slices"
	"strings"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/capacity"
	"github.com/gpuprof/gpuprof/internal/present"
	"github.com/gpuprof/gpuprof/termtext"
)

// RecommendJSON is the stable JSON shape of `gpuprof recommend --json`
// (docs/json.md).
type RecommendJSON struct {
	// Conf is the cluster answered for and the slurm.conf bound to it;
	// Inventory where Nodes came from, or why there are none.
	Conf            analysis.ConfUse          `json:"conf"`
	Inventory       analysis.Inventory        `json:"inventory"`
	Nodes           []analysis.Node           `json:"nodes"`
	Recommendations []analysis.Recommendation `json:"recommendations"`
	NoChange        []analysis.NoChange       `json:"no_change"`
}

// ToRecommendJSON shapes the findings and the nodes they are about for
// `gpuprof recommend --json`.
func ToRecommendJSON(in analysis.Input, f analysis.Findings) RecommendJSON {
	out := RecommendJSON{Conf: in.Conf, Inventory: f.Plan.Inventory, Nodes: in.Nodes, Recommendations: f.Recommendations, NoChange: f.NoChange}
	// Empty lists are [] rather than null, so consumers need no special case.
	if out.Nodes == nil {
		out.Nodes = []analysis.Node{}
	}
	if out.Recommendations == nil {
		out.Recommendations = []analysis.Recommendation{}
	}
	if out.NoChange == nil {
		out.NoChange = []analysis.NoChange{}
	}
	return out
}

// WriteRecommendations writes `gpuprof recommend`: every recommendation
// as a short report (title, the change, its evidence as sentences, the
// effect, the confidence and the configuration by target); then the
// no-change notes, the simulated plan's verdict when there is one (sim
// nil: not simulated) and how GPU time was counted.
func WriteRecommendations(w io.Writer, in analysis.Input, f analysis.Findings, sim *capacity.SimPlan) {
	WriteConfNote(w, in.Conf)
	if inv := f.Plan.Inventory; inv.Misfit != "" {
		printf(w, "No GPU inventory: %s.\n", termtext.Short(inv.Misfit, 600))
	}
	s := f.Summary
	printf(w, "Recommendations from %d %s (%d with GPU readings) on %d GPU %s.\n",
		s.Jobs, present.Plural(s.Jobs, "job", "jobs"), s.WithGPUData, len(in.Nodes), present.Plural(len(in.Nodes), "node", "nodes"))
	if l := measureSentence(s); l != "" {
		printf(w, "%s\n", l)
	}
	if len(f.Recommendations) == 0 {
		printf(w, "\nNo change is justified by the data.\n")
	}
	for i, r := range f.Recommendations {
		printf(w, "\n%d. [%s] %s\n", i+1, r.ID, termtext.Short(r.Title, 200))
		printf(w, "   Change: %s\n", termtext.Short(r.Change, 2000))
		if len(r.Evidence) > 0 {
			printf(w, "   Why:\n")
			for _, e := range r.Evidence {
				printf(w, "   - %s\n", sentence(e))
			}
		}
		switch {
		case r.Simulated != nil:
			printf(w, "   %s\n", termtext.Short(r.Simulated.Text, 2000))
			if r.Effect != "" {
				printf(w, "   Rationale: %s\n", termtext.Short(r.Effect, 2000))
			}
		case r.Effect != "":
			printf(w, "   Expected effect (not simulated): %s\n", termtext.Short(r.Effect, 2000))
		}
		printf(w, "   Confidence: %s", present.PercentWhole(r.Confidence)) // "92 %", as the report writes it
		if r.ConfidenceNote != "" {
			printf(w, " (%s)", termtext.Short(r.ConfidenceNote, 500))
		}
		printf(w, "\n")
		writeConfigLines(w, r.Config)
	}
	if len(f.NoChange) > 0 {
		printf(w, "\nRules that found nothing to change:\n")
		for _, n := range f.NoChange {
			printf(w, "- %s: %s\n", ruleWords(n.Rule), termtext.Short(n.Note, 2000))
		}
	}
	if sim != nil {
		printf(w, "\nPlan verdict (gpuprof plan has the whole plan): %s\n", sim.Verdict.Text)
	}
	Counting(w, f.Counting)
}

// writeConfigLines prints a recommendation's configuration grouped by
// target, in the order the lines were given within each target.
func writeConfigLines(w io.Writer, lines []analysis.ConfigLine) {
	var targets []string
	for _, l := range lines {
		if !slices.Contains(targets, l.Target) {
			targets = append(targets, l.Target)
		}
	}
	for _, t := range targets {
		printf(w, "   %s:\n", t)
		for _, l := range lines {
			if l.Target == t {
				printf(w, "     %s\n", l.Text)
			}
		}
	}
}

// sentence renders one piece of evidence as a sentence: what held, or,
// for a reason with no words, its rule in words. The rule's code
// ("sharing.candidates") is in --json; prose gets no internal names.
func sentence(r analysis.Reason) string {
	s := termtext.Short(r.String(), 1000)
	if s == "" {
		s = ruleWords(r.Rule)
	}
	if !strings.HasSuffix(s, ".") {
		s += "."
	}
	return s
}

// ruleWords writes a rule's code ("debug_partition", "user.shard") as
// words for prose: "debug partition", "user shard".
func ruleWords(rule string) string {
	return strings.NewReplacer("_", " ", ".", " ").Replace(termtext.Short(rule, 80))
}
