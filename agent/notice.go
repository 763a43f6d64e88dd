package agent

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gpuprof/gpuprof/gpu"
	"github.com/gpuprof/gpuprof/notice"
	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/store"
	"github.com/gpuprof/gpuprof/termtext"
)

// Notices (docs/notices.md): the rules run in the sampling tick on each
// job's live readings (noticeTick, O(GPUs), no allocation in the steady
// state, no I/O); a rule that fires becomes a request on a bounded queue;
// noticeLoop, a goroutine of its own, claims each in the node database
// before anything else (a restarted agent never sends twice), then looks
// up the job's name and QOS, checks opt-outs and the daily cap, mails, and
// runs the cancel action, each bounded in time, and records the outcome in
// the database and in the job's profile (which carries it to the
// collector).

// claimTries bounds the attempts to record a notice in a locked
// database.
const claimTries = 3

// noticeReq is one decided notice waiting for delivery.
type noticeReq struct {
	rec       store.NoticeRecord
	partition string
	start     time.Time
}

// noticeState is a job's notice state, under the agent's lock: nil
// tracker while notices are off or the job is exempt.
type noticeState struct {
	tracker *notice.Tracker
	// procs are, per GPU (profile order), the processes the previous
	// reading listed on it, as a set (procSet): when they change, the
	// GPU's idle runs restart (Tracker.Restart).
	procs []procSetSeen
}

// procSetSeen is one GPU's processes at the previous reading.
type procSetSeen struct {
	set  uint64
	seen bool
}

// procSet is a digest of the processes (PID, start time) listed on a GPU,
// independent of their order; 0 for none. It does not allocate.
func (a *Agent) procSet(procs []gpu.ProcessSample) uint64 {
	var sum uint64
	for _, p := range procs {
		sum += mix64(uint64(p.PID)<<32 ^ a.pids[p.PID].facts.start)
	}
	return sum
}

// mix64 is splitmix64's finaliser: it spreads each process's key over
// the 64 bits, so that a sum of two sets' keys hardly ever collides.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// noticeProcs gives the notice rules the processes GPU i's reading came
// from (called from apply, before noticeObserve): a notice or a cancel
// needs its evidence from the same processes for its whole window, so a
// change restarts the GPU's idle runs.
func (st *jobState) noticeProcs(i, gpus int, set uint64) {
	t := st.notes.tracker
	if t == nil {
		return
	}
	if len(st.notes.procs) != gpus {
		st.notes.procs = make([]procSetSeen, gpus)
	}
	p := &st.notes.procs[i]
	if p.seen && p.set != set {
		t.Restart(i)
	}
	p.set, p.seen = set, true
}

// noticeObserve gives the notice rules GPU i's reading (called from
// apply, the one place readings are attributed).
func (st *jobState) noticeObserve(i int, rd profile.Reading) {
	if st.notes.tracker != nil {
		st.notes.tracker.Observe(i, rd)
	}
}

// noticeTick evaluates the rules for one job after its readings of this
// tick were applied. Called with a.mu held.
func (a *Agent) noticeTick(now time.Time, st *jobState, readings map[string]reading) {
	cfg := a.opts.Notices
	if cfg == nil || st.provisional {
		// A job found from its processes gets no notice (nor cancel)
		// until a Slurm record names its owner and GPUs (identity.go).
		return
	}
	j := &st.prof
	// Asked at every tick, not once: a job found from its processes
	// learns its partition, account and user from a later hook.
	if cfg.Exempt.IsExempt(j.Partition, j.Account, j.User) {
		if st.notes.tracker != nil {
			_, why := cfg.Exempt.Exempt(j.Partition, j.Account, j.User)
			a.log.Info("notices: job exempt", "job", j.JobID, "why", why)
			st.notes.tracker = nil
		}
		return
	}
	t := st.notes.tracker
	if t == nil {
		st.notes.tracker = notice.NewTracker(&cfg.Rules, len(j.GPUs), j.Notices)
		return // this tick's readings came before the tracker
	}
	t.SetCancel(cfg.CancelIn(j.Partition))
	if t.GPUs() != len(j.GPUs) {
		t.Resize(len(j.GPUs))
		return
	}
	for i := range j.GPUs {
		if r, ok := readings[j.GPUs[i].UUID]; ok && r.err != nil {
			t.Lost(i, now)
		}
	}
	t.SetAllocation(j.Shards, j.AllocKnown)
	f, ok := t.Evaluate(now, j.Start, j.GPUs)
	if !ok {
		return
	}
	n := t.Describe(f, now, j, cfg.Loc)
	req := noticeReq{
		rec:       store.NoticeRecord{Key: j.Key, User: j.User, UID: j.UID, Account: j.Account, Notice: n},
		partition: j.Partition,
		start:     j.Start,
	}
	select {
	case a.noticeQ <- req:
		t.MarkFired(f.Rule, now)
	default:
		// Full: the rule still holds at the next tick and tries again.
		a.log.Warn("notices: delivery queue full; notice postponed", "job", j.JobID, "rule", f.Rule)
	}
}

// noticeLoop delivers decided notices one at a time until ctx ends.
func (a *Agent) noticeLoop(ctx context.Context) {
	a.abandonPending(ctx)
	for {
		select {
		case <-ctx.Done():
			return
		case req := <-a.noticeQ:
			a.deliverNotice(ctx, req)
		}
	}
}

// deliverNotice claims, sends and records one notice.
func (a *Agent) deliverNotice(ctx context.Context, req noticeReq) {
	cfg := a.opts.Notices
	r := req.rec
	log := a.log.With("job", r.JobID, "rule", r.Rule, "user", r.User)
	claimed, err := a.db.ClaimNotice(ctx, r)
	for try := 1; err != nil && errors.Is(err, store.ErrLocked) && try < claimTries; try++ {
		// Another writer (a hook, the flush) holds the database: try
		// again shortly rather than lose the notice.
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Duration(try) * time.Second):
		}
		claimed, err = a.db.ClaimNotice(ctx, r)
	}
	if err != nil {
		// Not recorded, so not sent: at most once. The rule stays fired in
		// memory for this run of the agent.
		log.Error("notices: cannot record the notice; not sent", "err", err)
		return
	}
	if !claimed {
		log.Info("notices: already decided before (restart); not sent again")
		return
	}
	a.setJobNotice(r)

	info, infoErr := cfg.Squeue.Lookup(ctx, r.JobID)
	if infoErr != nil {
		log.Warn("notices: job name and QOS unknown", "err", infoErr)
	}
	if cfg.Exempt.ExemptQOS(info.QOS) {
		r.Status, r.Detail = profile.NoticeExempt, "QOS "+info.QOS+" is exempt"
		a.finishNotice(ctx, r, log)
		return
	}
	cancel := r.Rule == profile.RuleCancel
	if cancel && errors.Is(infoErr, notice.ErrJobGone) {
		r.Status, r.Detail = profile.NoticeFailed, "not cancelled: the job ended before the action"
		a.finishNotice(ctx, r, log)
		return
	}
	if cancel && len(cfg.Exempt.QOS) > 0 && infoErr != nil {
		r.Status, r.Detail = profile.NoticeFailed, "not cancelled: the QOS is unknown and QOS exemptions exist: "+infoErr.Error()
		a.finishNotice(ctx, r, log)
		return
	}
	if !cancel || !cfg.Cancel.DryRun {
		// A dry run tells the user nothing: nothing happens to the job.
		r.Status, r.Detail = a.mailNotice(ctx, &r, info, req)
		if cancel {
			// The action's outcome is the status; the mail's goes in
			// the detail.
			r.Detail = joinDetail("second notice "+r.Status, r.Detail)
		}
	}
	if cancel {
		what, err := cfg.Cancel.Cancel(ctx, r.JobID, r.Evidence)
		switch {
		case err != nil:
			r.Status, r.Detail = profile.NoticeFailed, joinDetail(r.Detail, "cancel: "+err.Error())
		case cfg.Cancel.DryRun:
			r.Status, r.Detail = profile.NoticeDryRun, joinDetail(r.Detail, what)
		default:
			r.Status, r.Detail = profile.NoticeCanceled, joinDetail(r.Detail, what)
		}
	}
	a.finishNotice(ctx, r, log)
}

// abandonPending records the notices a previous run of the agent claimed
// and never finished (it stopped while delivering) as failed: the mail
// program may have taken the message just before the stop, so they are
// not sent again (at most once). Called before any delivery of this run.
func (a *Agent) abandonPending(ctx context.Context) {
	// The node database holds this node's notices only (under whatever
	// names the hooks gave it).
	rs, err := a.db.ReaderFor(store.System).ListNotices(ctx, store.NoticeFilter{Status: profile.NoticePending})
	if err != nil {
		a.log.Warn("notices: pending notices of a previous run not read", "err", err)
		return
	}
	for _, r := range rs {
		r.Status = profile.NoticeFailed
		r.Detail = joinDetail(r.Detail, "the agent stopped during delivery; not retried, so that it is never sent twice")
		a.finishNotice(ctx, r, a.log.With("job", r.JobID, "rule", r.Rule))
	}
}

// mailNotice sends the mail of r unless the user opted out, has no
// address or reached the daily cap, and returns the status and detail.
func (a *Agent) mailNotice(ctx context.Context, r *store.NoticeRecord, info notice.JobInfo, req noticeReq) (string, string) {
	cfg := a.opts.Notices
	out, how, err := cfg.OptOut.OptedOut(ctx, r.User)
	if out {
		return profile.NoticeOptedOut, how
	}
	optErr := ""
	if err != nil {
		optErr = "opt-out check failed (" + err.Error() + "); sent anyway"
	}
	addr, err := cfg.Recipients.Address(r.User)
	if err != nil {
		return profile.NoticeNoMail, err.Error()
	}
	r.Recipient = addr
	if cfg.DailyCap > 0 {
		day := time.Date(r.Time.Year(), r.Time.Month(), r.Time.Day(), 0, 0, 0, 0, r.Time.Location())
		n, err := a.db.ReaderFor(store.System).CountNotices(ctx, store.NoticeFilter{User: r.User, Node: r.Node,
			Status: profile.NoticeSent, Since: day, Until: day.AddDate(0, 0, 1)})
		if err != nil {
			return profile.NoticeFailed, "daily cap not checked: " + err.Error()
		}
		if n >= cfg.DailyCap {
			return profile.NoticeCapped, fmt.Sprintf("%d notices sent to %s today from %s (daily_cap %d)", n, r.User, r.Node, cfg.DailyCap)
		}
	}
	msg, err := notice.Compose(notice.Build(notice.MessageInput{
		From: cfg.From, To: addr, Notice: r.Notice, JobID: r.JobID, Node: r.Node, Cluster: r.Cluster,
		Name: info.Name, User: r.User, Start: req.start, OptOut: cfg.OptOut, Loc: cfg.Loc,
		CancelSignal: cfg.Cancel.Signal,
	}))
	if err != nil {
		return profile.NoticeNoMail, err.Error()
	}
	if err := cfg.Mailer.Send(ctx, addr, msg); err != nil {
		return profile.NoticeFailed, joinDetail(optErr, err.Error())
	}
	return profile.NoticeSent, optErr
}

func joinDetail(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

// finishNotice records r's outcome in the database and the job's profile.
func (a *Agent) finishNotice(ctx context.Context, r store.NoticeRecord, log interface {
	Info(string, ...any)
	Error(string, ...any)
}) {
	r.Detail, _ = cutDetail(r.Detail)
	if err := a.db.UpdateNotice(ctx, r); err != nil {
		log.Error("notices: outcome not recorded", "status", r.Status, "err", err)
	}
	a.setJobNotice(r)
	log.Info("notice", "status", r.Status, "recipient", r.Recipient, "evidence", r.Evidence, "detail", r.Detail)
}

// cutDetail bounds a detail (a program's output may be long) on a rune
// boundary.
func cutDetail(s string) (string, bool) {
	const maxDetail = 1024
	return termtext.Cut(s, maxDetail)
}

// setJobNotice puts r into its job's profile (a new slice each time: a
// flush may be reading a clone of the old one), so the next flush and the
// finished profile carry it.
func (a *Agent) setJobNotice(r store.NoticeRecord) {
	a.mu.Lock()
	defer a.mu.Unlock()
	st, ok := a.jobs[r.JobID]
	if !ok {
		return
	}
	ns := make([]profile.Notice, 0, len(st.prof.Notices)+1)
	replaced := false
	for _, n := range st.prof.Notices {
		if n.Rule == r.Rule {
			n, replaced = r.Notice, true
		}
		ns = append(ns, n)
	}
	if !replaced {
		ns = append(ns, r.Notice)
	}
	st.prof.Notices = ns
}

// finalNotices reads the job's notices from the database for its finished
// profile: the database has every outcome, the profile in memory may miss
// one recorded after the job left the agent's list.
func (a *Agent) finalNotices(ctx context.Context, j *profile.Job) {
	if a.opts.Notices == nil {
		return
	}
	rs, err := a.db.ReaderFor(store.System).ListNotices(ctx, store.NoticeFilter{Cluster: j.Cluster, JobID: j.JobID, Node: j.Node})
	if err != nil {
		a.log.Warn("notices: not read for the finished profile", "job", j.JobID, "err", err)
		return
	}
	if len(rs) == 0 {
		return
	}
	ns := make([]profile.Notice, len(rs))
	for i, r := range rs {
		ns[len(rs)-1-i] = r.Notice // ListNotices is newest first
	}
	j.Notices = ns
}

// learnAllocation asks slurmctld, once and off the prolog's path, what
// the job holds on this node (notice.Squeue.Allocation): slurmd gives the
// prolog the GPU behind a shard job but no shard count, so without this a
// --gres=shard:2 job alone on its GPU looks like a one-GPU job. The answer
// goes into the profile (Shards, AllocKnown: show and the collector read
// it) and the notice rules (noticeTick). Only where a job may hold shards
// (OversizedRule.SharedNodes); a failed or unclear answer leaves the
// allocation unknown, never whole.
func (a *Agent) learnAllocation(ctx context.Context, jobID string) {
	cfg := a.opts.Notices
	if cfg == nil || !cfg.Rules.Oversized.SharedNodes || cfg.Squeue.Program == "" {
		return
	}
	// The prolog's request ends before squeue answers: the look-up is
	// bounded by its own timeout, not by the request.
	ctx = context.WithoutCancel(ctx)
	a.lookups.Go(func() {
		g, err := cfg.Squeue.Allocation(ctx, jobID)
		if err != nil || !g.Known {
			a.log.Info("job allocation unknown: shards or whole GPUs not known to the notices", "job", jobID, "err", err)
			return
		}
		a.mu.Lock()
		defer a.mu.Unlock()
		if st, ok := a.jobs[jobID]; ok {
			st.prof.Shards, st.prof.AllocKnown = g.Shards, true
		}
	})
}
