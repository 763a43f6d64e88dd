package notice

import (
	"fmt"
	"strings"
	"time"

	"github.com/gpuprof/gpuprof/internal/present"
	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/slurmext"
)

// MessageInput is what a notice mail says.
type MessageInput struct {
	From, To              string
	Notice                profile.Notice
	Cluster, JobID, Node  string
	Name                  string // the job name as squeue gave it (any text); "" when unknown
	User                  string
	Start                 time.Time
	OptOut                OptOut // how the user can stop notices
	Loc                   *time.Location
	CancelSignal, Scancel string // for the cancel notice
}

// headline is the subject's words for a rule.
func headline(n profile.Notice) string {
	switch n.Rule {
	case profile.RuleIdleGPU:
		if len(n.GPUs) == 1 {
			return fmt.Sprintf("GPU %d idle", n.GPUs[0])
		}
		return present.Count(len(n.GPUs), "GPU", "GPUs") + " idle"
	case profile.RuleIdleJob:
		return "its GPUs are idle"
	case profile.RuleUnusedGPUs:
		return "several GPUs held, one used"
	case profile.RuleOversized:
		return "a whole GPU for a small job"
	case profile.RuleCancel:
		return "idle job cancelled"
	}
	return n.Rule
}

// Build writes the notice mail: the subject names the job and what was
// seen; the body says the job id and name, what was seen and since when
// (sacct's time form), the sbatch line that would avoid it next time, and
// how to stop such notices. Compose sanitises it.
func Build(in MessageInput) Message {
	n := in.Notice
	name := JobName(in.Name)
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	if in.User != "" {
		w("Hello %s,", in.User)
		w("")
	}
	w("your job %s (%s) on node %s of cluster %s %s.", in.JobID, name, in.Node, in.Cluster, summary(n.Rule))
	w("")
	w("What was seen: %s.", n.Evidence)
	w("Since: %s", slurmext.FormatTime(n.Since, in.Loc))
	if !in.Start.IsZero() {
		w("Job started: %s", slurmext.FormatTime(in.Start, in.Loc))
	}
	w("")
	switch {
	case n.Fix != "":
		w("Next time, submit it with")
		w("")
		w("    #SBATCH %s", n.Fix)
		w("")
		w("in the batch script (or sbatch %s on the command line).", n.Fix)
	case n.Rule == profile.RuleIdleJob || n.Rule == profile.RuleCancel:
		w("If the job does not need a GPU, submit it without --gres=gpu (or --gpus).")
		w("An interactive session holds its GPUs until it ends: exit it when done.")
	}
	w("")
	switch n.Rule {
	case profile.RuleCancel:
		w("It stayed idle after an earlier notice, so it is cancelled under this cluster's policy (scancel --signal=%s, then scancel).",
			strings.TrimPrefix(in.CancelSignal, "SIG"))
	case profile.RuleOversized:
		w("Nothing needs doing for this run; the line above lets the next one leave the rest of the card to others.")
	default:
		w("If the job is about to use its GPUs again, nothing needs doing; otherwise please end it (scancel %s) so that others can use them.", in.JobID)
	}
	w("")
	w("%s", stopWords(in.OptOut))
	w("")
	w("-- ")
	w("gpuprof on %s", in.Node)
	return Message{
		From:    in.From,
		To:      in.To,
		Subject: fmt.Sprintf("[gpuprof] job %s (%s): %s", in.JobID, name, headline(n)),
		Body:    b.String(),
		Date:    n.Time,
		ID:      in.Cluster + "." + in.JobID + "." + in.Node + "." + n.Rule,
	}
}

// summary ends the body's first sentence for a rule.
func summary(rule string) string {
	switch rule {
	case profile.RuleOversized:
		return "holds a whole GPU for work that fits a smaller one"
	case profile.RuleUnusedGPUs:
		return "holds several GPUs and uses one"
	}
	return "holds GPUs it does not use"
}

// stopWords says how the user stops these notices.
func stopWords(o OptOut) string {
	switch {
	case o.HomeFile != "":
		return fmt.Sprintf("To stop these notices, create the file ~/%s:\n\n    touch ~/%s", o.HomeFile, o.HomeFile)
	case o.File != "":
		return fmt.Sprintf("To stop these notices, ask your administrators to add you to %s.", o.File)
	}
	return "To stop these notices, ask your administrators."
}
