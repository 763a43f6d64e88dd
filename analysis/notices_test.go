package analysis

import (
	"math"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/slurmext"
)

// nt is an instant of November 2026 (UTC) given as day, hour, minute.
func nt(day, hour, minute int) time.Time {
	return time.Date(2026, 11, day, hour, minute, 0, 0, time.UTC)
}

func notice(rule, status string, at time.Time) profile.Notice {
	return profile.Notice{Rule: rule, Status: status, Time: at, Since: at.Add(-20 * time.Minute), Evidence: "seen"}
}

// noticeJob is a finished job with gpus GPUs, its start, end and limit.
func noticeJob(id string, gpus int, start, end time.Time, limit time.Duration) Job {
	j := Job{ID: id, Start: start, End: end, TimeLimit: limit}
	for range gpus {
		j.GPUs = append(j.GPUs, busy(0, 0))
	}
	return j
}

// TestNoticeTally counts a month of hand-made jobs whose answers are
// worked out below, one case per job.
func TestNoticeTally(t *testing.T) {
	month := Window{From: nt(1, 0, 0), To: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
	unlimited := noticeJob("F", 1, nt(19, 0, 0), nt(20, 3, 0), 0)
	unlimited.Unlimited = true
	running := noticeJob("H", 1, nt(25, 0, 0), time.Time{}, 48*time.Hour)
	dryRun := noticeJob("K", 1, nt(28, 0, 0), time.Time{}, 48*time.Hour)
	jobs := []struct {
		job     Job
		notices []profile.Notice
	}{
		// A: 2 GPUs, limit ends 11-11 08:00, ended 30 min after the
		// notice at 11-10 10:30: 2 × 21.5 h = 43 GPU-hours freed.
		{noticeJob("A", 2, nt(10, 8, 0), nt(10, 10, 30), 24*time.Hour),
			[]profile.Notice{notice(profile.RuleIdleGPU, profile.NoticeSent, nt(10, 10, 0))}},
		// B: limit ends 12-01 08:00, past the window: 1 × (24:00 − 21:30)
		// = 2.5 GPU-hours.
		{noticeJob("B", 1, nt(30, 20, 0), nt(30, 21, 30), 12*time.Hour),
			[]profile.Notice{notice(profile.RuleIdleJob, profile.NoticeSent, nt(30, 21, 0))}},
		// C: no time limit known: freed, amount unknown.
		{noticeJob("C", 1, nt(15, 0, 0), nt(15, 12, 59), 0),
			[]profile.Notice{notice(profile.RuleIdleGPU, profile.NoticeSent, nt(15, 12, 0))}},
		// D: ended exactly an hour after the notice (counts): limit ends
		// 11-05 06:00, so 5 GPU-hours.
		{noticeJob("D", 1, nt(4, 20, 0), nt(5, 1, 0), 10*time.Hour),
			[]profile.Notice{notice(profile.RuleIdleGPU, profile.NoticeSent, nt(5, 0, 0))}},
		// D2: a second more than an hour: not freed by the notice.
		{noticeJob("D2", 1, nt(4, 20, 0), nt(5, 1, 0).Add(time.Second), 10*time.Hour),
			[]profile.Notice{notice(profile.RuleIdleGPU, profile.NoticeSent, nt(5, 0, 0))}},
		// E: the notice was capped: the user never read it.
		{noticeJob("E", 1, nt(6, 0, 0), nt(6, 1, 10), 10*time.Hour),
			[]profile.Notice{notice(profile.RuleIdleGPU, profile.NoticeCapped, nt(6, 1, 0))}},
		// F: warned, then cancelled by the action; UNLIMITED: it could have
		// held its GPU to the window's end, 10 days 21 h = 261 GPU-hours.
		{unlimited, []profile.Notice{
			notice(profile.RuleIdleJob, profile.NoticeSent, nt(20, 2, 30)),
			notice(profile.RuleCancel, profile.NoticeCanceled, nt(20, 3, 0))}},
		// G: notified in October (not counted among November's notices),
		// ended in November: limit ends 11-01 02:00, so 1.5 GPU-hours of
		// November freed.
		{noticeJob("G", 1, time.Date(2026, 10, 31, 22, 0, 0, 0, time.UTC), nt(1, 0, 30), 4*time.Hour),
			[]profile.Notice{notice(profile.RuleIdleGPU, profile.NoticeSent, time.Date(2026, 10, 31, 23, 30, 0, 0, time.UTC))}},
		// H: still running; a rule this version does not know sorts last.
		{running, []profile.Notice{
			notice(profile.RuleOversized, profile.NoticeSent, nt(25, 6, 0)),
			notice("future_rule", "queued", nt(25, 7, 0))}},
		// I: ran into its limit right after the notice: freed, 0 hours.
		{noticeJob("I", 4, nt(8, 0, 0), nt(8, 2, 0), 2*time.Hour),
			[]profile.Notice{notice(profile.RuleUnusedGPUs, profile.NoticeSent, nt(8, 1, 30))}},
		// J: the notice came after the job's end: nothing it freed.
		{noticeJob("J", 1, nt(12, 0, 0), nt(12, 10, 0), 24*time.Hour),
			[]profile.Notice{notice(profile.RuleIdleGPU, profile.NoticeSent, nt(12, 10, 5))}},
		// K: the cancel action in dry-run mode, job still running.
		{dryRun, []profile.Notice{
			notice(profile.RuleIdleJob, profile.NoticeSent, nt(28, 3, 0)),
			notice(profile.RuleCancel, profile.NoticeDryRun, nt(28, 3, 30))}},
		// L: no notice at all: not a job with a notice.
		{noticeJob("L", 8, nt(3, 0, 0), nt(3, 1, 0), 24*time.Hour), nil},
	}
	tally := NewNoticeTally(month)
	for _, j := range jobs {
		tally.AddJob(j.job, j.notices)
	}
	got := tally.Summary()
	want := NoticeSummary{
		Window: month, Notices: 14, Sent: 10, Cancelled: 1, DryRuns: 1, Jobs: 11,
		Counts: []NoticeCount{
			{profile.RuleIdleGPU, profile.NoticeSent, 5},
			{profile.RuleIdleGPU, profile.NoticeCapped, 1},
			{profile.RuleIdleJob, profile.NoticeSent, 3},
			{profile.RuleOversized, profile.NoticeSent, 1},
			{profile.RuleUnusedGPUs, profile.NoticeSent, 1},
			{profile.RuleCancel, profile.NoticeDryRun, 1},
			{profile.RuleCancel, profile.NoticeCanceled, 1},
			{"future_rule", "queued", 1},
		},
		FreedJobs: 7, FreedUnknown: 1, FreedGPUHours: 43 + 2.5 + 5 + 261 + 1.5, FreedUnlimited: 1,
	}
	if math.Abs(got.FreedGPUHours-want.FreedGPUHours) > 1e-9 {
		t.Errorf("FreedGPUHours = %v, want %v", got.FreedGPUHours, want.FreedGPUHours)
	}
	got.FreedGPUHours = want.FreedGPUHours
	if !slices.Equal(got.Counts, want.Counts) {
		t.Errorf("Counts =\n%v\nwant\n%v", got.Counts, want.Counts)
	}
	got.Counts, want.Counts = nil, nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("summary =\n%+v\nwant\n%+v", got, want)
	}
	gotS := tally.Summary().Sentence()
	wantS := "14 notices to the users of 11 jobs (10 sent, 1 cancelled the job, 2 not sent or pending, 1 cancel dry run); " +
		"6 jobs ended within an hour of one, freeing at most 313.0 GPU-hours: their GPUs from their end to their time limit's " +
		"(1 job with no time limit: to the period's end), not bounded by the cluster's GPUs (unknown), " +
		"and 1 more by an amount unknown (no time limit known)."
	if gotS != wantS {
		t.Errorf("Sentence() =\n%s\nwant\n%s", gotS, wantS)
	}
}

// TestNoticeTallyFromViews reads notices from the profiles of a two-node
// job with a scheduler record, as the report's loop hands them over: both
// nodes' notices count, the job once, its GPUs summed over the nodes.
func TestNoticeTallyFromViews(t *testing.T) {
	rec := &slurmext.JobRecord{Cluster: "lab", JobID: "77", Start: nt(2, 8, 0), End: nt(2, 9, 0),
		TimeLimit: 4 * time.Hour, State: "CANCELLED"}
	node := func(name string, gpus int, ns ...profile.Notice) profile.Job {
		p := profile.Job{Key: profile.Key{Cluster: "lab", JobID: "77", Node: name}, Start: nt(2, 8, 0), End: nt(2, 9, 0),
			Status: profile.StatusFinished, Notices: ns}
		for i := range gpus {
			p.GPUs = append(p.GPUs, profile.GPU{UUID: name + string(rune('a'+i)), SlurmIndex: i})
		}
		return p
	}
	profiles := []profile.Job{
		node("gpu01", 2, notice(profile.RuleIdleGPU, profile.NoticeSent, nt(2, 8, 40))),
		node("gpu02", 2, notice(profile.RuleIdleGPU, profile.NoticeSent, nt(2, 8, 41))),
	}
	tally := NewNoticeTally(Window{From: nt(1, 0, 0), To: nt(30, 0, 0)})
	tally.Add(rec, profiles)
	tally.Add(nil, []profile.Job{node("gpu03", 1)}) // no notice: ignored
	got := tally.Summary()
	// 4 GPUs × (12:00 − 09:00) = 12 GPU-hours.
	if got.Notices != 2 || got.Jobs != 1 || got.FreedJobs != 1 || got.FreedGPUHours != 12 || got.FreedUnknown != 0 {
		t.Errorf("summary = %+v, want 2 notices, 1 job, 1 freed job, 12 GPU-hours", got)
	}
}

// TestNoticeFreedBoundedByCluster is the month of issue #38 on the real
// test Slurm (4 GPUs, November: 2,880 GPU-hours of capacity): 24 one-GPU
// jobs without a time limit (and some of 365 days) ended within an hour
// of a notice, one an hour from Nov 3 00:00. Summed job by job each could
// have held its GPU to the month's end, 15,852 GPU-hours, more than the
// cluster has; they cannot have held more than its 4 GPUs at once: 1 + 2
// + 3 GPU-hours while the first three ends pass, then 4 GPUs for 669 h,
// 2,682 GPU-hours. The sentence says the bound and how it was computed.
func TestNoticeFreedBoundedByCluster(t *testing.T) {
	month := Window{From: nt(1, 0, 0), To: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
	tally := NewNoticeTally(month)
	for i := range 24 {
		end := nt(3, i, 0)
		j := noticeJob(string(rune('A'+i)), 1, nt(1, 0, 0), end, 365*24*time.Hour)
		if i%3 != 0 {
			j.TimeLimit, j.Unlimited = 0, true
		}
		tally.AddJob(j, []profile.Notice{notice(profile.RuleIdleJob, profile.NoticeSent, end.Add(-10*time.Minute))})
	}
	tally.CapGPUs(4)
	s := tally.Summary()
	if s.FreedJobs != 24 || s.FreedUnlimited != 16 || math.Abs(s.FreedGPUHours-2682) > 1e-6 || math.Abs(s.FreedJobByJob-15852) > 1e-6 {
		t.Errorf("summary = %+v, want 24 freed jobs (16 without a limit), 2,682 GPU-hours at most 4 at once (15,852 job by job)", s)
	}
	if capacity := 4 * month.Hours(); s.FreedGPUHours > capacity {
		t.Errorf("freed %v GPU-hours, more than the cluster's %v", s.FreedGPUHours, capacity)
	}
	want := "24 notices to the users of 24 jobs (24 sent); 24 jobs ended within an hour of one, freeing at most 2,682 GPU-hours: " +
		"their GPUs from their end to their time limit's (16 jobs with no time limit: to the period's end), " +
		"never more than the cluster's 4 GPUs at once (15,852 GPU-hours summed job by job)."
	if got := s.Sentence(); got != want {
		t.Errorf("Sentence() =\n%s\nwant\n%s", got, want)
	}
}

func TestNoticeTallyEmpty(t *testing.T) {
	s := NewNoticeTally(Window{}).Summary()
	if s.Counts == nil || len(s.Counts) != 0 {
		t.Errorf("Counts = %#v, want an empty list (JSON [])", s.Counts)
	}
	if got, want := s.Sentence(), "No notices in this period."; got != want {
		t.Errorf("Sentence() = %q, want %q", got, want)
	}
	// An open window bounds no UNLIMITED job: its amount is unknown.
	j := noticeJob("U", 1, nt(1, 0, 0), nt(1, 1, 0), 0)
	j.Unlimited = true
	tally := NewNoticeTally(Window{})
	tally.AddJob(j, []profile.Notice{notice(profile.RuleIdleJob, profile.NoticeSent, nt(1, 0, 30))})
	s = tally.Summary()
	if s.FreedJobs != 1 || s.FreedUnknown != 1 || s.FreedGPUHours != 0 {
		t.Errorf("open window, UNLIMITED job: %+v, want 1 freed job of unknown amount", s)
	}
	want := "1 notice to the users of 1 job (1 sent); 1 job ended within an hour of one, " +
		"freeing GPU time by an amount unknown (no time limit known)."
	if got := s.Sentence(); got != want {
		t.Errorf("Sentence() =\n%s\nwant\n%s", got, want)
	}
}

func TestNoticeLine(t *testing.T) {
	at := time.Date(2026, 12, 3, 14, 2, 11, 0, time.UTC)
	idle := "GPU 1 idle for 45 min: no process, utilisation 0 %, memory 0 B"
	tests := []struct {
		name string
		n    profile.Notice
		want string
	}{
		{"sent", profile.Notice{Rule: profile.RuleIdleGPU, Status: profile.NoticeSent, Time: at, Evidence: idle},
			"notice sent 2026-12-03T14:02:11: " + idle},
		{"capped", profile.Notice{Rule: profile.RuleIdleGPU, Status: profile.NoticeCapped, Time: at, Evidence: idle},
			"notice not sent 2026-12-03T14:02:11 (daily cap): " + idle},
		{"failed with detail", profile.Notice{Rule: profile.RuleIdleGPU, Status: profile.NoticeFailed, Time: at,
			Evidence: idle, Detail: "sendmail: exit status 75"},
			"notice not sent 2026-12-03T14:02:11 (the mail program failed: sendmail: exit status 75): " + idle},
		{"opted out", profile.Notice{Rule: profile.RuleIdleJob, Status: profile.NoticeOptedOut, Time: at, Evidence: idle},
			"notice not sent 2026-12-03T14:02:11 (the user opted out): " + idle},
		{"no address", profile.Notice{Rule: profile.RuleIdleJob, Status: profile.NoticeNoMail, Time: at, Evidence: idle},
			"notice not sent 2026-12-03T14:02:11 (no mail address known): " + idle},
		{"exempt QOS", profile.Notice{Rule: profile.RuleIdleJob, Status: profile.NoticeExempt, Time: at, Evidence: idle},
			"notice not sent 2026-12-03T14:02:11 (the job's QOS is exempt): " + idle},
		{"cancel warning", profile.Notice{Rule: profile.RuleCancel, Status: profile.NoticeSent, Time: at, Evidence: "idle 30 min"},
			"cancel warning sent 2026-12-03T14:02:11: idle 30 min"},
		{"cancelled", profile.Notice{Rule: profile.RuleCancel, Status: profile.NoticeCanceled, Time: at, Evidence: "idle 40 min"},
			"job cancelled 2026-12-03T14:02:11: idle 40 min"},
		{"dry run", profile.Notice{Rule: profile.RuleCancel, Status: profile.NoticeDryRun, Time: at, Evidence: "idle 40 min"},
			"cancel dry run 2026-12-03T14:02:11 (nothing cancelled): idle 40 min"},
		{"no evidence: the rule in words", profile.Notice{Rule: profile.RuleUnusedGPUs, Status: profile.NoticeSent, Time: at},
			"notice sent 2026-12-03T14:02:11: several GPUs asked for, one used"},
		{"pending", profile.Notice{Rule: profile.RuleIdleGPU, Status: profile.NoticePending, Time: at, Evidence: idle},
			"notice pending 2026-12-03T14:02:11 (no outcome recorded): " + idle},
		{"unknown status", profile.Notice{Rule: "later", Status: "queued", Time: at},
			"notice not sent 2026-12-03T14:02:11 (status queued): later"},
		{"unknown time", profile.Notice{Rule: profile.RuleIdleGPU, Status: profile.NoticeSent, Evidence: idle},
			"notice sent Unknown: " + idle},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := NoticeLine(tc.n, time.UTC); got != tc.want {
				t.Errorf("NoticeLine =\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
	// In another zone the instant is that zone's local time, as sacct
	// prints it.
	tokyo := time.FixedZone("JST", 9*3600)
	n := profile.Notice{Rule: profile.RuleIdleGPU, Status: profile.NoticeSent, Time: at, Evidence: idle}
	if got, want := NoticeLine(n, tokyo), "notice sent 2026-12-03T23:02:11: "+idle; got != want {
		t.Errorf("NoticeLine in JST = %q, want %q", got, want)
	}
}

func TestNoticeWordsCoverEveryRuleAndStatus(t *testing.T) {
	for _, r := range noticeRules {
		if NoticeRuleWords(r) == r {
			t.Errorf("rule %q has no words", r)
		}
	}
	for _, s := range noticeStatuses {
		if NoticeStatusWords(s) == s && s != profile.NoticeSent {
			t.Errorf("status %q has no words", s)
		}
	}
}
