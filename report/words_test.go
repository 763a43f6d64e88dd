package report

import (
	"html"
	"regexp"
	"strings"
	"testing"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/capacity"
)

// mdCodeBlocks returns the code blocks of md labelled label ("sbatch"),
// each as its lines, in order.
func mdCodeBlocks(md, label string) [][]string {
	var out [][]string
	lines := strings.Split(md, "\n")
	for i := 0; i < len(lines); i++ {
		if lines[i] != escapeMarkdown(label)+":" || i+2 >= len(lines) || !strings.HasPrefix(lines[i+2], "```") {
			continue
		}
		fence := lines[i+2]
		var block []string
		j := i + 3
		for ; j < len(lines) && lines[j] != fence; j++ {
			block = append(block, lines[j])
		}
		out = append(out, block)
		i = j
	}
	return out
}

// htmlCodeBlocks returns the code blocks of page labelled label.
func htmlCodeBlocks(page, label string) [][]string {
	re := regexp.MustCompile(`(?s)<p class="code-label">([^<]*)</p>\s*<pre><code>(.*?)</code></pre>`)
	var out [][]string
	for _, m := range re.FindAllStringSubmatch(page, -1) {
		if html.UnescapeString(m[1]) == label {
			out = append(out, strings.Split(html.UnescapeString(m[2]), "\n"))
		}
	}
	return out
}

// checkSbatchBlock fails unless every #SBATCH line of block comes before
// any other line.
func checkSbatchBlock(t *testing.T, where string, block []string) {
	t.Helper()
	other := false
	for _, l := range block {
		if strings.HasPrefix(l, "#SBATCH") {
			if other {
				t.Errorf("%s: %q comes after a command; sbatch ignores it:\n%s", where, l, strings.Join(block, "\n"))
			}
		} else {
			other = true
		}
	}
}

// sbatchFixture is fixture with three recommendations that carry sbatch
// lines: a cluster-wide one whose export comes before its #SBATCH line,
// and two per-user ones.
func sbatchFixture() Data {
	d := fixture()
	recs := d.Findings.Recommendations
	recs[0].Config = append(recs[0].Config,
		analysis.ConfigLine{Target: analysis.TargetSbatch, Text: "export XLA_PYTHON_CLIENT_MEM_FRACTION=0.09"},
		analysis.ConfigLine{Target: analysis.TargetSbatch, Text: "#SBATCH --gres=shard:1"})
	recs = append(recs,
		analysis.Recommendation{ID: "R3", Kind: analysis.RecUserGPUs, Title: "User alice: ask for 1 GPU", Change: "--gres=gpu:1", Confidence: 0.5,
			Config: []analysis.ConfigLine{{Target: analysis.TargetSbatch, Text: "#SBATCH --gres=gpu:1"}}},
		analysis.Recommendation{ID: "R4", Kind: analysis.RecUserShard, Title: "User bob: use a shard", Change: "--gres=shard:1", Confidence: 0.5,
			Config: []analysis.ConfigLine{{Target: analysis.TargetSbatch, Text: "#SBATCH --partition=shared"}, {Target: analysis.TargetSbatch, Text: "#SBATCH --gres=shard:1"}}},
	)
	d.Findings.Recommendations = recs
	return d
}

// TestSbatchPerRecommendation: sbatch lines are shown per recommendation
// (so per user), never merged across recommendations, and #SBATCH lines
// come first in each block.
func TestSbatchPerRecommendation(t *testing.T) {
	d := sbatchFixture()
	out := renderAll(t, d)
	md := mdSection(t, out["md"], "Recommendations")
	page := htmlSection(t, out["html"], "recommendations")
	want := map[string][]string{ // each recommendation's own lines, #SBATCH first
		"R1": {"#SBATCH --gres=shard:1", "export XLA_PYTHON_CLIENT_MEM_FRACTION=0.09"},
		"R3": {"#SBATCH --gres=gpu:1"},
		"R4": {"#SBATCH --partition=shared", "#SBATCH --gres=shard:1"},
	}
	for format, blocks := range map[string][][]string{"md": mdCodeBlocks(md, "sbatch"), "html": htmlCodeBlocks(page, "sbatch")} {
		if len(blocks) != len(want) {
			t.Errorf("%s: %d sbatch blocks, want one per recommendation with sbatch lines (%d): %q", format, len(blocks), len(want), blocks)
			continue
		}
		for i, id := range []string{"R1", "R3", "R4"} {
			checkSbatchBlock(t, format+" "+id, blocks[i])
			if strings.Join(blocks[i], "\n") != strings.Join(want[id], "\n") {
				t.Errorf("%s: sbatch block %d = %q, want %s's lines %q", format, i, blocks[i], id, want[id])
			}
		}
	}
	// The roll-up keeps the cluster-wide targets and no sbatch block.
	i := strings.Index(md, "### All configuration changes by target")
	if i < 0 {
		t.Fatal("Markdown has no roll-up of configuration changes")
	}
	rollup := md[i:]
	if b := mdCodeBlocks(rollup, "sbatch"); len(b) > 0 {
		t.Errorf("the roll-up merges sbatch lines of different recommendations: %q", b)
	}
	for _, target := range []string{"slurm.conf", "gres.conf", "sacctmgr"} {
		if len(mdCodeBlocks(rollup, target)) != 1 {
			t.Errorf("the roll-up has no %s block", target)
		}
	}
}

// TestBottleneckNote: the note under the bottleneck table says the shares
// add up to more than 100 % only when they do, and the real sum otherwise.
func TestBottleneckNote(t *testing.T) {
	d := fixture() // shares: 9,100.5 of 12,960.5 GPU-hours = 70.2 %
	for format, text := range map[string]string{
		"md":   mdSection(t, renderAll(t, d)["md"], "Bottlenecks"),
		"html": html.UnescapeString(htmlText(htmlSection(t, renderAll(t, d)["html"], "bottlenecks"))),
	} {
		if strings.Contains(text, "more than 100") {
			t.Errorf("%s: the shares add up to 70.2 %%, the note says more than 100 %%:\n%s", format, text)
		}
		if !strings.Contains(text, "add up to 70.2 %") {
			t.Errorf("%s: the note does not give the real sum, 70.2 %%:\n%s", format, text)
		}
	}
	d.Findings.Summary.ByBottleneck[0].GPUHours = 6000 // now 13,600.5 GPU-hours = 104.9 %
	md := mdSection(t, renderAll(t, d)["md"], "Bottlenecks")
	if !strings.Contains(md, "several bottlenecks") || !strings.Contains(md, "more than 100 % (104.9 %)") {
		t.Errorf("shares of 104.9 %%: the note does not say why they add up to more than 100 %%:\n%s", md)
	}
}

// TestZeroJobRowsLeftOut: a class, bottleneck, partition, model, account,
// user or final state that no job had is no row of its table.
func TestZeroJobRowsLeftOut(t *testing.T) {
	d := fixture()
	sum := &d.Findings.Summary
	sum.ByClass[0] = analysis.ClassShare{Class: analysis.ClassUnknown}
	d.Findings.Profiles[2].Class = analysis.ClassShortDebug // no other "unknown" on the page
	sum.ByBottleneck[3] = analysis.KindShare{Kind: analysis.KindIOBound}
	sum.Partitions = append(sum.Partitions, analysis.PartitionSummary{Partition: "emptypart"})
	w := &d.Workload
	w.Models = append(w.Models, analysis.ModelUsage{Model: "NVIDIA L40S", MemoryTotal: 48 << 30})
	w.Accounts = append(w.Accounts, analysis.GroupUsage{Name: "emptyacct"})
	w.Users = append(w.Users, analysis.GroupUsage{Name: "emptyuser"})
	w.Lost = append(w.Lost, analysis.LostShare{State: "NODE_FAIL"})
	d.Findings.Plan.Classes = append(d.Findings.Plan.Classes, analysis.ClassLoad{Class: analysis.ClassPreprocessingIO, Jobs: 0})
	out := renderAll(t, d)
	// "| unknown | 0 |": the class row; an energy cell may say unknown.
	for _, row := range []string{"| unknown | 0 |", "| io bound |", "| emptypart |", "| NVIDIA L40S |", "| emptyacct |", "| emptyuser |", "| NODE\\_FAIL |", "| preprocessing io | 0 |"} {
		if strings.Contains(out["md"], row) {
			t.Errorf("Markdown has a row with zero jobs: %s", row)
		}
	}
	for _, cell := range []string{"<td>unknown</td>", "<td>io bound</td>", "<td>emptypart</td>", "<td>NVIDIA L40S</td>", "<td>emptyacct</td>", "<td>emptyuser</td>", "<td>NODE_FAIL</td>"} {
		if strings.Contains(out["html"], cell) {
			t.Errorf("HTML has a row with zero jobs: %s", cell)
		}
	}
	// Rows with jobs stay.
	for _, row := range []string{"| long training |", "| compute bound |", "| debug |", "| physics |", "| alice |", "| FAILED |"} {
		if !strings.Contains(out["md"], row) {
			t.Errorf("Markdown lost a row with jobs: %s", row)
		}
	}
}

// oneRE finds a count of 1 with a plural noun.
var oneRE = regexp.MustCompile(`(^|[^0-9.,])1 (others|GPUs|job-GPUs|GPU nodes|nodes|jobs|seeds|replays|months|tasks|readings|recurring tasks|users|accounts)\b`)

// TestPluralsOfOne: a count of 1 takes the singular everywhere in the
// report.
func TestPluralsOfOne(t *testing.T) {
	d := fixture()
	d.Workload.OtherUsers.Count = 1
	d.Workload.OtherAccounts.Count = 1
	d.Workload.Headline.VRAMPeakFrac.N = 1
	d.Findings.Summary.Notes = analysis.DataNotes{NaN: 1}
	sp := d.SimPlan
	sp.Seeds, sp.Replays, sp.ReplayedJobs, sp.LeadTimeMonths = 1, 1, 1, 1
	sp.Calibration.Jobs = 1
	sp.Timeline = &capacity.Timeline{SearchedMonths: 1, BreachMonth: -1}
	d.Findings.Plan.Params.Months = 1
	d.Findings.Plan.Scaling = analysis.Scaling{Valid: true, Tasks: 1, Efficiency: 0.8}
	out := renderAll(t, d)
	for format, text := range map[string]string{"md": out["md"], "html": html.UnescapeString(htmlText(out["html"]))} {
		for _, m := range oneRE.FindAllString(text, -1) {
			t.Errorf("%s: plural after 1: %q", format, strings.TrimSpace(m))
		}
	}
	for _, want := range []string{"1 other |", "over 1 job-GPU:", "1 reading was ignored", "1 seed,", "1 replay of 1 job", "lead time 1 month)"} {
		if !strings.Contains(out["md"], want) {
			t.Errorf("Markdown lacks %q", want)
		}
	}
}

// TestConfidenceAsPercent: a confidence is a percentage in HTML and
// Markdown, as gpuprof recommend prints it.
func TestConfidenceAsPercent(t *testing.T) {
	out := renderAll(t, fixture())
	for format, text := range map[string]string{"md": out["md"], "html": html.UnescapeString(out["html"])} {
		for _, want := range []string{"Confidence: 71 % (600 jobs", "Confidence: 55 %"} {
			if !strings.Contains(text, want) {
				t.Errorf("%s lacks %q", format, want)
			}
		}
		if strings.Contains(text, "Confidence: 0.") {
			t.Errorf("%s prints a confidence as a fraction", format)
		}
	}
}
