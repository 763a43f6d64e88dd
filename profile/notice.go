package profile

import "time"

// Notice rules: what a notice to a job's user was about (see package
// notice for how each is decided).
const (
	RuleIdleGPU    = "idle_gpu"    // (a) an allocated GPU idle for the rule's window
	RuleIdleJob    = "idle_job"    // (b) every GPU of the job idle for the window
	RuleOversized  = "oversized"   // (c) a small share of a large card for a long time
	RuleUnusedGPUs = "unused_gpus" // (d) several GPUs asked for, one used
	RuleCancel     = "cancel"      // the idle-job action: second notice, then scancel
)

// NoticeRules are the notice rules in the order they are listed (the
// order above): what gpuprof notices --rule takes.
func NoticeRules() []string {
	return []string{RuleIdleGPU, RuleIdleJob, RuleOversized, RuleUnusedGPUs, RuleCancel}
}

// Notice statuses: what became of a notice.
const (
	// NoticePending: claimed (recorded) and handed to delivery, no outcome
	// yet. A notice an agent left pending when it stopped is not sent
	// again: at most once, never twice.
	NoticePending  = "pending"
	NoticeSent     = "sent"      // handed to the mail program, which accepted it
	NoticeFailed   = "failed"    // the mail program failed or timed out (Detail says why)
	NoticeCapped   = "capped"    // not sent: the user's daily cap was reached
	NoticeOptedOut = "opted_out" // not sent: the user opted out
	NoticeNoMail   = "no_mail"   // not sent: no address is known for the user
	NoticeExempt   = "exempt"    // not sent: the job's QOS is exempt (known from squeue only after the decision)
	NoticeDryRun   = "dry_run"   // the cancel action in dry-run mode: nothing cancelled
	NoticeCanceled = "cancelled" // the job was signalled and cancelled
)

// Notice is one notice decided for a job on this node: at most one per job,
// node and rule. It is recorded before anything is sent, so that a
// restarted agent never sends it twice, and it travels with the profile to
// the collector.
type Notice struct {
	Rule string `json:"rule"`
	// Time is when the notice was decided (and, when sent, sent); Since
	// is when the condition it reports began (the first idle reading of
	// the window, the job's start for oversized).
	Time  time.Time `json:"time"`
	Since time.Time `json:"since"`
	// GPUs are the Slurm indices on the node of the GPUs concerned.
	GPUs      []int  `json:"gpus,omitempty"`
	Recipient string `json:"recipient,omitempty"`
	Status    string `json:"status"`
	// Evidence is what was seen, in words ("GPU 1 idle for 45 min: no
	// process, utilisation 0 %, memory 0 B"); Fix the sbatch line that
	// would avoid it next time, empty when there is none; Detail why a
	// notice was not sent or an action failed.
	Evidence string `json:"evidence"`
	Fix      string `json:"fix,omitempty"`
	Detail   string `json:"detail,omitempty"`
}
