package main

import (
	"context"
	"github.com/gpuprof/gpuprof/cliview"
	"github.com/gpuprof/gpuprof/internal/present"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/capacity"
	"github.com/gpuprof/gpuprof/store"
)

// analysisOptions are the flags recommend and plan share: which jobs to
// read and with which thresholds.
type analysisOptions struct {
	Since   string
	Until   string
	Config  string
	Local   bool
	Cluster string
	// Quiet hides the simulated plan's progress (shown on a terminal).
	Quiet bool
}

func (o *analysisOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Since, "since", "", sinceHelp)
	fs.StringVar(&o.Until, "until", "", untilHelp)
	fs.StringVar(&o.Cluster, "cluster", "", clusterHelp)
	fs.StringVar(&o.Config, "analysis-config", "", "analysis thresholds (TOML, see contrib/analysis.toml.example; default: built-in)")
	fs.BoolVar(&o.Local, "local", false, "read this host's jobs (the local database, or the agent's query socket) even when a collector is configured")
	fs.BoolVar(&o.Quiet, "quiet", false, "do not show the queue replay's progress (shown on a terminal's stderr when the plan runs over 2 s)")
}

// load reads the jobs and the thresholds and builds the analysis input,
// with the GPU inventory taken from the profiles.
func (o *analysisOptions) load(ctx context.Context, g *globalOptions) (analysis.Input, analysis.Config, error) {
	f, c, err := o.filterConfig()
	if err != nil {
		return analysis.Input{}, c, err
	}
	in, err := loadInput(ctx, g, f, o.Local, o.Cluster)
	return in, c, err
}

// filterConfig is the jobs the flags select and the analysis
// configuration.
func (o *analysisOptions) filterConfig() (store.ViewFilter, analysis.Config, error) {
	jf := jobsOptions{Since: o.Since, Until: o.Until}
	f, err := jf.filter()
	if err != nil {
		return f, analysis.Config{}, err
	}
	// The memory floor (service detection, VRAM need) needs the series.
	f.WithSeries = true
	c, err := analysis.ConfigAt(o.Config)
	if err != nil {
		return f, c, err
	}
	return f, c, nil
}

type recommendOptions struct {
	analysisOptions
	JSON       bool
	Emit       string
	NoSimulate bool
}

// recommendJSON is the stable JSON shape of `gpuprof recommend --json`
// (docs/json.md).
type recommendJSON struct {
	// Conf is the cluster answered for and the slurm.conf bound to it;
	// Inventory where Nodes came from, or why there are none.
	Conf            analysis.ConfUse          `json:"conf"`
	Inventory       analysis.Inventory        `json:"inventory"`
	Nodes           []analysis.Node           `json:"nodes"`
	Recommendations []analysis.Recommendation `json:"recommendations"`
	NoChange        []analysis.NoChange       `json:"no_change"`
}

func newRecommendCommand(g *globalOptions) *cobra.Command {
	o := &recommendOptions{}
	cmd := &cobra.Command{
		Use:   "recommend",
		Short: "Changes to queues, partitions, QOS and GPU sharing the recorded jobs justify",
		Long: `Analyses the recorded jobs and prints each change the data justifies: what to
change, why (the numbers), the expected effect, a confidence that reflects
the sample size, and the exact slurm.conf / gres.conf lines and sacctmgr
commands; then the rules that found nothing to change, with why.

Each recommendation is replayed on the queue simulator (docs/whatif.md):
its expected effect is the simulated change in queue wait of the jobs it is
about, with the spread over seeds and the replay's calibration error; one
that does not help, or harms the queue as a whole, says so. The replay
reads every user's jobs, so for a user who sees only their own it is not
run; --no-simulate skips it.

--emit slurm prints only the configuration, grouped by where it goes, as a
script for an administrator to review and apply.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.Emit != "" && o.Emit != "slurm" {
				return usagef("--emit: unknown format %q (want slurm)", o.Emit)
			}
			if o.Emit != "" && o.JSON {
				return usagef("--emit and --json exclude each other")
			}
			flt, c, err := o.filterConfig()
			if err != nil {
				return err
			}
			var in analysis.Input
			var f analysis.Findings
			var sim *capacity.SimPlan
			if o.NoSimulate || o.Emit != "" {
				if in, err = loadInput(cmd.Context(), g, flt, o.Local, o.Cluster); err != nil {
					return err
				}
				if f, err = analysis.Analyse(in, c); err != nil {
					return err
				}
			} else {
				pd, err := analyseAndPlan(cmd.Context(), g, flt, o.analysisOptions, c, c.Plan.Params(), cmd.ErrOrStderr())
				if err != nil {
					return err
				}
				in, f, sim = pd.Input, pd.Findings, &pd.Sim
			}
			w := cmd.OutOrStdout()
			switch {
			case o.Emit == "slurm":
				_, err = io.WriteString(w, analysis.EmitSlurm(f.Recommendations))
				return err
			case o.JSON:
				return cliview.WriteJSON(w, toRecommendJSON(in, f))
			}
			writeRecommendations(w, in, f)
			if sim != nil {
				printf(w, "\nPlan verdict (gpuprof plan has the whole plan): %s\n", sim.Verdict.Text)
			}
			cliview.Counting(w, f.Counting)
			return nil
		},
	}
	o.analysisOptions.AddFlags(cmd.Flags())
	cmd.Flags().BoolVar(&o.JSON, "json", false, `print {"nodes", "recommendations", "no_change"} as JSON (docs/json.md)`)
	cmd.Flags().BoolVar(&o.NoSimulate, "no-simulate", false, "do not replay the queue for each recommendation's effect (faster on very large windows)")
	cmd.Flags().StringVar(&o.Emit, "emit", "", `print only the configuration: "slurm" (sacctmgr commands, slurm.conf and gres.conf lines, scontrol commands)`)
	return cmd
}

func toRecommendJSON(in analysis.Input, f analysis.Findings) recommendJSON {
	out := recommendJSON{Conf: in.Conf, Inventory: f.Plan.Inventory, Nodes: in.Nodes, Recommendations: f.Recommendations, NoChange: f.NoChange}
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

// writeRecommendations prints every recommendation as a short report:
// title, the change, its evidence as sentences, the effect, the confidence
// and the configuration by target; then the no-change notes.
func writeRecommendations(w io.Writer, in analysis.Input, f analysis.Findings) {
	writeConfNote(w, in.Conf)
	if inv := f.Plan.Inventory; inv.Misfit != "" {
		printf(w, "No GPU inventory: %s.\n", cliview.Clean(inv.Misfit, 600))
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
		printf(w, "\n%d. [%s] %s\n", i+1, r.ID, cliview.Clean(r.Title, 200))
		printf(w, "   Change: %s\n", cliview.Clean(r.Change, 2000))
		if len(r.Evidence) > 0 {
			printf(w, "   Why:\n")
			for _, e := range r.Evidence {
				printf(w, "   - %s\n", sentence(e))
			}
		}
		switch {
		case r.Simulated != nil:
			printf(w, "   %s\n", cliview.Clean(r.Simulated.Text, 2000))
			if r.Effect != "" {
				printf(w, "   Rationale: %s\n", cliview.Clean(r.Effect, 2000))
			}
		case r.Effect != "":
			printf(w, "   Expected effect (not simulated): %s\n", cliview.Clean(r.Effect, 2000))
		}
		printf(w, "   Confidence: %s", present.Confidence(r.Confidence)) // "92 %", as the report writes it
		if r.ConfidenceNote != "" {
			printf(w, " (%s)", cliview.Clean(r.ConfidenceNote, 500))
		}
		printf(w, "\n")
		writeConfigLines(w, r.Config)
	}
	if len(f.NoChange) > 0 {
		printf(w, "\nRules that found nothing to change:\n")
		for _, n := range f.NoChange {
			printf(w, "- %s: %s\n", ruleWords(n.Rule), cliview.Clean(n.Note, 2000))
		}
	}
}

// writeConfigLines prints a recommendation's configuration grouped by
// target, in the order the lines were given within each target.
func writeConfigLines(w io.Writer, lines []analysis.ConfigLine) {
	var targets []string
	for _, l := range lines {
		targets = appendOnce(targets, l.Target)
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
	s := cliview.Clean(r.String(), 1000)
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
	return strings.NewReplacer("_", " ", ".", " ").Replace(cliview.Clean(rule, 80))
}
