package analysis

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gpuprof/gpuprof/internal/present"
	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/slurmext"
)

// FreedAfter is how soon after a notice a job must end for its remaining
// time to count as freed by the notice: a user who reads the mail and
// cancels does so within the hour; a job that ends later ended for its own
// reasons as far as anyone can tell.
const FreedAfter = time.Hour

// noticeRules is the order in which rules are listed: the profile's order.
var noticeRules = profile.NoticeRules()

// noticeStatuses is the order in which statuses are listed.
var noticeStatuses = []string{profile.NoticePending, profile.NoticeSent, profile.NoticeFailed, profile.NoticeCapped,
	profile.NoticeOptedOut, profile.NoticeNoMail, profile.NoticeExempt, profile.NoticeDryRun, profile.NoticeCanceled}

// NoticeRuleWords names a notice rule for people: "idle GPU" for
// profile.RuleIdleGPU. An unknown rule (a newer agent's) is returned as
// it is.
func NoticeRuleWords(rule string) string {
	switch rule {
	case profile.RuleIdleGPU:
		return "idle GPU"
	case profile.RuleIdleJob:
		return "every GPU of the job idle"
	case profile.RuleOversized:
		return "small share of a large GPU"
	case profile.RuleUnusedGPUs:
		return "several GPUs asked for, one used"
	case profile.RuleCancel:
		return "idle job cancel action"
	}
	return rule
}

// NoticeStatusWords says what became of a notice, plainly: "sent", "not
// sent: daily cap". An unknown status is returned as it is.
func NoticeStatusWords(status string) string {
	switch status {
	case profile.NoticePending:
		return "pending: no outcome recorded"
	case profile.NoticeSent:
		return "sent"
	case profile.NoticeFailed:
		return "not sent: the mail program failed"
	case profile.NoticeCapped:
		return "not sent: daily cap"
	case profile.NoticeOptedOut:
		return "not sent: the user opted out"
	case profile.NoticeNoMail:
		return "not sent: no mail address known"
	case profile.NoticeExempt:
		return "not sent: the job's QOS is exempt"
	case profile.NoticeDryRun:
		return "dry run: nothing cancelled"
	case profile.NoticeCanceled:
		return "job cancelled"
	}
	return status
}

// NoticeLine is one notice in a line, for gpuprof show and the TUI's job
// detail: when and what became of it, then what was seen, "notice sent
// 2026-12-03T14:02:11: GPU 1 idle for 45 min: no process, …" or "notice
// not sent 2026-12-03T14:02:11 (daily cap): …". Instants are sacct's
// (slurmext.FormatTime) in loc (nil: local). The text is the agent's and
// the job's: callers sanitise it for their screen.
func NoticeLine(n profile.Notice, loc *time.Location) string {
	at := slurmext.FormatTime(n.Time, loc)
	var head string
	switch n.Status {
	case profile.NoticeSent:
		head = "notice sent " + at
		if n.Rule == profile.RuleCancel {
			head = "cancel warning sent " + at
		}
	case profile.NoticeCanceled:
		head = "job cancelled " + at
	case profile.NoticeDryRun:
		head = "cancel dry run " + at + " (nothing cancelled)"
	case profile.NoticePending:
		// Handed to delivery, no outcome recorded (the agent stopped):
		// never sent again, so it may or may not have reached the user.
		head = "notice pending " + at + " (no outcome recorded)"
	default:
		why, ok := strings.CutPrefix(NoticeStatusWords(n.Status), "not sent: ")
		if !ok {
			why = "status " + n.Status
		}
		if n.Detail != "" {
			why += ": " + n.Detail
		}
		head = "notice not sent " + at + " (" + why + ")"
	}
	what := n.Evidence
	if what == "" {
		what = NoticeRuleWords(n.Rule)
	}
	return head + ": " + what
}

// NoticeCount is how many notices of one rule ended in one status.
type NoticeCount struct {
	Rule   string `json:"rule"`
	Status string `json:"status"`
	N      int    `json:"n"`
}

// NoticeSummary is what the monthly report says of the notices: how many
// were decided in the window, by rule and status, and what the jobs did
// after them.
type NoticeSummary struct {
	Window Window `json:"window"`
	// Notices is the number of notices decided in the window; Sent of them
	// reached the user (status sent), Cancelled were the cancel action
	// carried out, DryRuns the cancel action in dry-run mode, and the rest
	// were not sent (capped, opted out, no address, exempt QOS, mail
	// failed) or have
	// no outcome recorded (pending).
	Notices   int `json:"notices"`
	Sent      int `json:"sent"`
	Cancelled int `json:"cancelled"`
	DryRuns   int `json:"dry_runs"`
	// Jobs is how many jobs had a notice in the window.
	Jobs int `json:"jobs"`
	// Counts are the notices by rule (in profile's order, then unknown
	// rules by name) and status (likewise), zero counts left out.
	Counts []NoticeCount `json:"counts"`
	// FreedJobs are the jobs that ended in the window within FreedAfter of
	// a notice that reached their user (or of their cancellation).
	// FreedGPUHours is the GPU time they could still have held: from their
	// end to the end of their time limit (start + limit; UNLIMITED: the
	// window's end), times their GPUs, clipped to the window. FreedUnknown
	// of the FreedJobs have no known time limit or start: freed, by an
	// amount nobody knows (not 0).
	FreedJobs     int     `json:"freed_jobs"`
	FreedGPUHours float64 `json:"freed_gpu_hours"`
	FreedUnknown  int     `json:"freed_unknown"`
	// FreedUnlimited of the FreedJobs had no time limit (UNLIMITED):
	// counted to the window's end, an upper bound.
	FreedUnlimited int `json:"freed_unlimited,omitempty"`
	// FreedCapGPUs is the cluster's GPUs (NoticeTally.CapGPUs; 0:
	// unknown): the freed jobs cannot have held more at once, so
	// FreedGPUHours is the sweep of their freed spans with at most that
	// many GPUs at any instant. FreedJobByJob is their sum job by job,
	// present when the cap lowered it.
	FreedCapGPUs  int     `json:"freed_cap_gpus,omitempty"`
	FreedJobByJob float64 `json:"freed_job_by_job,omitempty"`
}

// freedSpan is the time a freed job could still have held: [from, to)
// with its GPUs.
type freedSpan struct {
	from, to time.Time
	gpus     int
}

// NoticeTally accumulates a NoticeSummary one job at a time, so that a
// month of a million jobs is never held at once. The zero value is not
// usable: call NewNoticeTally.
type NoticeTally struct {
	s      NoticeSummary
	counts map[[2]string]int
	// spans are the freed jobs' spans (one per freed job with a known
	// amount: as few as the notices), swept by Summary under capGPUs.
	spans   []freedSpan
	capGPUs int
}

// CapGPUs bounds the freed GPU time by the cluster's GPUs (its
// inventory): the freed jobs cannot have held more at once. 0 leaves it
// unbounded (no inventory known), which the summary then shows.
func (t *NoticeTally) CapGPUs(gpus int) { t.capGPUs = max(gpus, 0) }

// NewNoticeTally starts a tally over w (a zero bound is open; an open end
// bounds no UNLIMITED job, which then counts as freed by an unknown
// amount).
func NewNoticeTally(w Window) *NoticeTally {
	return &NoticeTally{s: NoticeSummary{Window: w}, counts: map[[2]string]int{}}
}

// Add counts one job: its scheduler record (nil when none) and its
// per-node profiles, the halves of a store view, whose Notices are read.
func (t *NoticeTally) Add(rec *slurmext.JobRecord, profiles []profile.Job) {
	var notices []profile.Notice
	for i := range profiles {
		notices = append(notices, profiles[i].Notices...)
	}
	if len(notices) == 0 {
		return
	}
	t.add(FromView(rec, profiles), notices)
}

// AddJob is Add for a job already converted (tests, generators): j's
// times, limit and GPUs with the notices of all its nodes.
func (t *NoticeTally) AddJob(j Job, notices []profile.Notice) {
	if len(notices) > 0 {
		t.add(j, notices)
	}
}

func (t *NoticeTally) add(j Job, notices []profile.Notice) {
	w := t.s.Window
	counted := false
	for _, n := range notices {
		if !inWindow(n.Time, w) {
			continue
		}
		counted = true
		t.s.Notices++
		switch n.Status {
		case profile.NoticeSent:
			t.s.Sent++
		case profile.NoticeCanceled:
			t.s.Cancelled++
		case profile.NoticeDryRun:
			t.s.DryRuns++
		}
		t.counts[[2]string{n.Rule, n.Status}]++
	}
	if counted {
		t.s.Jobs++
	}
	if j.End.IsZero() || !inWindow(j.End, w) || !endedAfterNotice(j.End, notices) {
		return
	}
	t.s.FreedJobs++
	sp, ok := freedGPUTime(j, w)
	if !ok {
		t.s.FreedUnknown++
		return
	}
	if j.Unlimited {
		t.s.FreedUnlimited++
	}
	if sp.to.After(sp.from) {
		t.spans = append(t.spans, sp)
	}
}

// freedHours sums the spans' GPU-hours job by job, and swept with at most
// capGPUs held at once (0: no cap, the same sum).
func freedHours(spans []freedSpan, capGPUs int) (byJob, capped float64) {
	type event struct {
		at time.Time
		d  int
	}
	ev := make([]event, 0, 2*len(spans))
	var sum ExactSum // the spans come in the read's order
	for _, sp := range spans {
		sum.Add(float64(sp.gpus) * sp.to.Sub(sp.from).Hours())
		ev = append(ev, event{sp.from, sp.gpus}, event{sp.to, -sp.gpus})
	}
	byJob = sum.Float()
	if capGPUs <= 0 {
		return byJob, byJob
	}
	slices.SortFunc(ev, func(a, b event) int { return a.at.Compare(b.at) })
	held := 0
	for i, e := range ev {
		if i > 0 {
			capped += float64(min(held, capGPUs)) * e.at.Sub(ev[i-1].at).Hours()
		}
		held += e.d
	}
	return byJob, capped
}

// inWindow reports whether at lies in [w.From, w.To), zero bounds open.
func inWindow(at time.Time, w Window) bool {
	return (w.From.IsZero() || !at.Before(w.From)) && (w.To.IsZero() || at.Before(w.To))
}

// endedAfterNotice reports whether end lies within FreedAfter after a
// notice that reached the user or cancelled the job.
func endedAfterNotice(end time.Time, notices []profile.Notice) bool {
	for _, n := range notices {
		if n.Status != profile.NoticeSent && n.Status != profile.NoticeCanceled {
			continue
		}
		if d := end.Sub(n.Time); d >= 0 && d <= FreedAfter {
			return true
		}
	}
	return false
}

// freedGPUTime is the GPU time j could still have held after its end,
// inside w: its GPUs from its end to its limit's (UNLIMITED: w's end), and
// whether it is known.
func freedGPUTime(j Job, w Window) (freedSpan, bool) {
	gpus := len(j.GPUs)
	if gpus == 0 {
		gpus = j.ReqGPUs
	}
	if gpus == 0 {
		return freedSpan{}, false
	}
	var limitEnd time.Time
	switch {
	case j.Unlimited:
		if w.To.IsZero() {
			return freedSpan{}, false
		}
		limitEnd = w.To
	case j.TimeLimit > 0 && !j.Start.IsZero():
		limitEnd = j.Start.Add(j.TimeLimit)
	default:
		return freedSpan{}, false
	}
	from := j.End
	if !w.From.IsZero() && from.Before(w.From) {
		from = w.From
	}
	if !w.To.IsZero() && limitEnd.After(w.To) {
		limitEnd = w.To
	}
	if !limitEnd.After(from) {
		return freedSpan{}, true // it ended at its limit: nothing left to free
	}
	return freedSpan{from: from, to: limitEnd, gpus: gpus}, true
}

// Summary returns the tally so far.
func (t *NoticeTally) Summary() NoticeSummary {
	s := t.s
	byJob, capped := freedHours(t.spans, t.capGPUs)
	s.FreedGPUHours, s.FreedCapGPUs = capped, t.capGPUs
	if capped < byJob-1e-9 {
		s.FreedJobByJob = byJob
	}
	s.Counts = make([]NoticeCount, 0, len(t.counts))
	for k, n := range t.counts {
		s.Counts = append(s.Counts, NoticeCount{Rule: k[0], Status: k[1], N: n})
	}
	rank := func(order []string, v string) int {
		if i := slices.Index(order, v); i >= 0 {
			return i
		}
		return len(order)
	}
	slices.SortFunc(s.Counts, func(a, b NoticeCount) int {
		if c := rank(noticeRules, a.Rule) - rank(noticeRules, b.Rule); c != 0 {
			return c
		}
		if c := strings.Compare(a.Rule, b.Rule); c != 0 {
			return c
		}
		if c := rank(noticeStatuses, a.Status) - rank(noticeStatuses, b.Status); c != 0 {
			return c
		}
		return strings.Compare(a.Status, b.Status)
	})
	return s
}

// Sentence says the summary in one sentence for the report: "12 notices
// to the users of 9 jobs (10 sent, 2 not sent or pending); 4 jobs ended within an
// hour of one, freeing 31.5 GPU-hours of their time limits, and 1 more by
// an amount unknown (no time limit known)." With no notice: "No notices
// in this period."
func (s NoticeSummary) Sentence() string {
	if s.Notices == 0 && s.FreedJobs == 0 {
		return "No notices in this period."
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s to the users of %s", present.Count(s.Notices, "notice", "notices"), present.Count(s.Jobs, "job", "jobs"))
	var parts []string
	if s.Sent > 0 {
		parts = append(parts, fmt.Sprintf("%d sent", s.Sent))
	}
	if s.Cancelled > 0 {
		parts = append(parts, fmt.Sprintf("%d cancelled the job", s.Cancelled))
	}
	if other := s.Notices - s.Sent - s.Cancelled - s.DryRuns; other > 0 {
		parts = append(parts, fmt.Sprintf("%d not sent or pending", other))
	}
	if s.DryRuns > 0 {
		parts = append(parts, present.Count(s.DryRuns, "cancel dry run", "cancel dry runs"))
	}
	if len(parts) > 0 {
		b.WriteString(" (" + strings.Join(parts, ", ") + ")")
	}
	known := s.FreedJobs - s.FreedUnknown
	switch {
	case s.FreedJobs == 0:
		b.WriteString("; no job ended within an hour of one.")
	case known == 0:
		fmt.Fprintf(&b, "; %s within an hour of one, freeing GPU time by an amount unknown (no time limit known).",
			endedWords(s.FreedJobs))
	case s.FreedUnlimited == 0 && s.FreedJobByJob == 0:
		fmt.Fprintf(&b, "; %s within an hour of one, freeing %s GPU-hours of their time limits",
			endedWords(known), present.GPUHours(s.FreedGPUHours))
		if s.FreedUnknown > 0 {
			fmt.Fprintf(&b, ", and %d more by an amount unknown (no time limit known)", s.FreedUnknown)
		}
		b.WriteString(".")
	default:
		// An upper bound: say what bounds it.
		fmt.Fprintf(&b, "; %s within an hour of one, freeing at most %s GPU-hours: their GPUs from their end to their time limit's",
			endedWords(known), present.GPUHours(s.FreedGPUHours))
		if s.FreedUnlimited > 0 {
			fmt.Fprintf(&b, " (%s no time limit: to the period's end)", present.Count(s.FreedUnlimited, "job with", "jobs with"))
		}
		switch {
		case s.FreedJobByJob > 0:
			fmt.Fprintf(&b, ", never more than the cluster's %s at once (%s GPU-hours summed job by job)",
				present.Count(s.FreedCapGPUs, "GPU", "GPUs"), present.GPUHours(s.FreedJobByJob))
		case s.FreedCapGPUs == 0:
			b.WriteString(", not bounded by the cluster's GPUs (unknown)")
		}
		if s.FreedUnknown > 0 {
			fmt.Fprintf(&b, ", and %d more by an amount unknown (no time limit known)", s.FreedUnknown)
		}
		b.WriteString(".")
	}
	return b.String()
}

func endedWords(n int) string { return present.Count(n, "job", "jobs") + " ended" }
