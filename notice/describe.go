package notice

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/internal/present"
	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/slurmext"
)

// Describe turns a finding into the notice to record: its GPUs as Slurm
// indices, the evidence in words, and the sbatch option that would avoid
// it next time (empty when none would). j is the job's profile (its GPUs
// in the tracker's order); loc is the zone of the times in the evidence
// (nil: local, as sacct prints them). The notice's status is pending.
// What the evidence says of the job's GPUs (their memory, mean
// utilisation or SM activity, XIDs) comes from the job's fact sheet
// (analysis.SheetGPU, the facts show and the TUI's detail draw); what
// the latest reading showed is the tracker's own.
func (t *Tracker) Describe(f Finding, now time.Time, j *profile.Job, loc *time.Location) profile.Notice {
	n := profile.Notice{Rule: f.Rule, Time: now, Since: f.Since, Status: profile.NoticePending}
	sheet := make([]analysis.GPUSheet, len(j.GPUs))
	for i := range j.GPUs {
		sheet[i] = analysis.SheetGPU(j.Node, &j.GPUs[i])
	}
	var labels []string
	for i := range j.GPUs {
		if f.GPUs&(1<<i) != 0 && i < len(t.gpus) {
			n.GPUs = append(n.GPUs, gpuIndex(j, i))
			labels = append(labels, t.gpuWords(j, i, sheet[i].XIDs))
		}
	}
	total := len(j.GPUs)
	idle := bits.OnesCount64(f.GPUs)
	since := slurmext.FormatTime(f.Since, loc)
	dur := slurmext.FormatDuration(now.Sub(f.Since), false)
	switch f.Rule {
	case profile.RuleIdleGPU:
		n.Evidence = fmt.Sprintf("%d of %s idle for %s (since %s): %s", idle, present.Count(total, "GPU", "GPUs"), dur, since, strings.Join(labels, "; "))
		n.Fix = gresOption(total - idle)
	case profile.RuleUnusedGPUs:
		n.Evidence = fmt.Sprintf("%d GPUs allocated, only one used; %d idle for %s (since %s): %s",
			total, idle, dur, since, strings.Join(labels, "; "))
		n.Fix = gresOption(1)
	case profile.RuleIdleJob, profile.RuleCancel:
		what := "the GPU"
		switch {
		case j.AllocKnown && j.Shards > 0:
			// A shard job holds part of its GPU, not the GPU.
			what = "the GPU behind the job's " + present.Count(j.Shards, "shard", "shards") + ","
			if total > 1 {
				what = fmt.Sprintf("all %d GPUs behind the job's %s,", total, present.Count(j.Shards, "shard", "shards"))
			}
		case total > 1:
			what = fmt.Sprintf("all %d GPUs", total)
		}
		n.Evidence = fmt.Sprintf("%s of the job idle for %s (since %s): %s", what, dur, since, strings.Join(labels, "; "))
		if f.Rule == profile.RuleCancel {
			n.Evidence += fmt.Sprintf("; still idle %s after the idle-job notice of %s",
				slurmext.FormatDuration(now.Sub(t.idleJobAt), false), slurmext.FormatTime(t.idleJobAt, loc))
		}
		// A job that worked before it idled needs a shorter limit; one
		// idle from its start needs no GPU at all (no option says that).
		if worked := f.Since.Sub(j.Start); !j.Start.IsZero() && worked > MaxGap*t.rules.Interval {
			n.Fix = "--time=" + slurmTime(analysis.SuggestedLimit(worked)) // as the time-limit hint suggests
		} else if !j.Start.IsZero() {
			n.Evidence += "; no GPU work since the job started"
		}
	case profile.RuleOversized:
		g := &sheet[0]
		what, value := "mean utilisation", present.Missing
		if g.Facts.UtilKnown {
			value = strconv.FormatFloat(g.Facts.UtilMean, 'f', 0, 64)
		}
		if a := g.Activity; a != nil && a.SM.Known && !g.GPU.Activity.Shared() {
			// The job's own SM activity (a shared GPU's is everyone's).
			what, value = "mean SM activity", present.Activity(a.SM.Mean)
		}
		n.GPUs = []int{gpuIndex(j, 0)}
		n.Evidence = fmt.Sprintf("GPU %d (%s, %s) for %s: memory peak %s (a need of %s with the %s× margin), %s %s %%",
			gpuIndex(j, 0), g.GPU.Model, present.Bytes(g.Facts.MemTotal), dur, present.Bytes(g.Facts.MemPeak), present.Bytes(f.Need),
			strconv.FormatFloat(t.rules.Oversized.Margin, 'f', -1, 64), what, value)
		if f.Target == "shard" {
			n.Fix = "--gres=shard:1"
			n.Evidence += fmt.Sprintf(": fits a shard (at most %s %% of the card)",
				strconv.FormatFloat(t.rules.Oversized.MemoryShare*100, 'f', -1, 64))
		} else {
			n.Fix = "--gres=gpu:" + f.Target + ":1"
			n.Evidence += ": fits a " + f.Target
		}
	}
	return n
}

// gpuWords says what GPU i's latest reading showed, with the XIDs its
// fact sheet lists.
func (t *Tracker) gpuWords(j *profile.Job, i int, xids analysis.XIDList) string {
	g := &t.gpus[i]
	var b strings.Builder
	fmt.Fprintf(&b, "GPU %d: ", gpuIndex(j, i))
	switch g.procs {
	case 0:
		b.WriteString("no process")
	case 1:
		b.WriteString("1 process")
	default:
		fmt.Fprintf(&b, "%d processes", g.procs)
	}
	if g.utilValid {
		fmt.Fprintf(&b, ", utilisation %d %%", g.util)
	}
	if g.smValid {
		fmt.Fprintf(&b, ", SM activity %s %%", present.Activity(g.sm))
	}
	if g.memValid {
		b.WriteString(", memory " + present.Bytes(g.mem))
	}
	b.WriteString(xidWords(xids))
	return b.String()
}

// xidWords names the XIDs seen on a GPU with their class, so a user can
// tell a GPU that failed (hardware: the job was its victim) from an error
// of their program (application): ", XIDs 79 GPU has fallen off the bus
// (hardware)", each code once, as the fact sheet lists them (show lists
// them so). Empty without one.
func xidWords(xids analysis.XIDList) string {
	if len(xids.Codes) == 0 {
		return ""
	}
	words := make([]string, len(xids.Codes))
	for k, c := range xids.Codes {
		words[k] = c.String()
	}
	return ", XIDs " + strings.Join(words, " and ")
}

// gpuIndex is the Slurm index of the job's GPU i on the node, else its
// position.
func gpuIndex(j *profile.Job, i int) int {
	if s := j.GPUs[i].SlurmIndex; s >= 0 {
		return s
	}
	return i
}

// gresOption asks for n GPUs on the node (the agent sees one node: --gres
// counts per node).
func gresOption(n int) string {
	if n <= 0 {
		return ""
	}
	return "--gres=gpu:" + strconv.Itoa(n)
}

// slurmTime writes a limit as sbatch --time takes it: HH:MM:SS, or
// D-HH:MM:SS from a day (slurmext's form).
func slurmTime(d time.Duration) string { return slurmext.FormatDuration(d, false) }
