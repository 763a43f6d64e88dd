package agent

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/mail"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/config"
	"github.com/gpuprof/gpuprof/gpu"
	"github.com/gpuprof/gpuprof/gpu/sim"
	"github.com/gpuprof/gpuprof/hookproto"
	"github.com/gpuprof/gpuprof/notice"
	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/store"
)

// Stand-ins for the programs the notices run, written into the test's
// directory: sendmail keeps argv and message per call, squeue answers a
// fixed QOS and a hostile job name, scancel keeps its calls.
const (
	standInSendmail = `#!/bin/sh
dir=%s
n=$(ls "$dir" | grep -c '\.argv$')
n=$((n + 1))
printf '%%s\n' "$@" > "$dir/$n.argv"
cat > "$dir/$n.msg"
`
	// The stand-in squeue answers %b (notice.Squeue.Allocation) with
	// NOTICE_GRES, a whole GPU unless a test says otherwise, and %q|%j
	// with the QOS and a hostile name.
	standInSqueue = "#!/bin/sh\ncase \"$*\" in *%%b*) printf '%%s\\n' \"${NOTICE_GRES:-gres/gpu:1}\"; exit 0;; esac\n" +
		"printf '%%s|%%s\\n' \"${NOTICE_QOS:-normal}\" 'train\r\nBcc: evil@x.example'\n"
	standInScancel = "#!/bin/sh\nprintf '%%s\\n' \"$*\" >> %s/scancel\n"
)

type noticeFixture struct {
	*fixture
	mails string // directory of captured mails
	cfg   *notice.Config
}

func newNoticeFixture(t *testing.T, mutate func(*config.NoticesConfig)) *noticeFixture {
	t.Helper()
	f := &noticeFixture{fixture: newFixture(t, nil)}
	f.mails = filepath.Join(f.dir, "mails")
	if err := os.MkdirAll(f.mails, 0o755); err != nil {
		t.Fatal(err)
	}
	script := func(name, body string, args ...any) string {
		p := filepath.Join(f.dir, name)
		if err := os.WriteFile(p, []byte(fmt.Sprintf(body, args...)), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	c := config.Default().Notices
	c.Enabled = true
	c.Address = "{user}@lab.example"
	c.Sendmail = script("sendmail", standInSendmail, f.mails)
	c.Squeue = script("squeue", standInSqueue)
	c.Cancel.Scancel = script("scancel", standInScancel, f.mails)
	c.HomeOptOut = ""
	c.IdleGPU.Window = config.Duration(10 * time.Second)
	c.IdleJob.Window = config.Duration(10 * time.Second)
	c.UnusedGPUs.Window = config.Duration(10 * time.Second)
	c.ExemptPartitions = []string{"interactive"}
	if mutate != nil {
		mutate(&c)
	}
	whole := config.Default()
	whole.Notices = c
	if err := whole.Validate(); err != nil {
		t.Fatalf("test config: %v", err)
	}
	cfg, err := notice.FromConfig(c, time.Second, notice.ClusterGres{})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Loc = time.UTC
	f.cfg = cfg
	f.a = f.noticeAgent()
	return f
}

// noticeAgent is a fresh agent with notices on the fixture's database (a
// restart, when one ran before).
func (f *noticeFixture) noticeAgent() *Agent {
	f.t.Helper()
	a, err := New(context.Background(), Options{
		Cluster: "c", Node: "n1", Socket: filepath.Join(f.dir, "agent.sock"),
		Interval: time.Second, FlushInterval: time.Minute, SeriesPoints: 64,
		Procfs: f.procfs, CgroupRoot: filepath.Join(f.dir, "cgroup"),
		Clock:   func() time.Time { return f.now },
		Notices: f.cfg,
	}, f.node, f.db, f.spool, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		f.t.Fatal(err)
	}
	return a
}

func (f *noticeFixture) startIn(job, partition string, refs ...hookproto.GPURef) {
	f.do(hookproto.Request{Op: hookproto.OpStart, Start: &hookproto.JobStart{Cluster: "c", Node: "n1", JobID: job, User: "u" + job, UID: 1000,
		Account: "lab", Partition: partition, Start: f.now, GPUs: refs}})
}

// deliver runs the delivery of every queued notice, as noticeLoop does,
// and returns how many there were.
func (f *noticeFixture) deliver() int {
	n := 0
	for {
		select {
		case req := <-f.a.noticeQ:
			f.a.deliverNotice(context.Background(), req)
			n++
		default:
			return n
		}
	}
}

// sent returns the captured messages, in order.
func (f *noticeFixture) sent() []*mail.Message {
	f.t.Helper()
	var out []*mail.Message
	for i := 1; ; i++ {
		raw, err := os.ReadFile(filepath.Join(f.mails, fmt.Sprintf("%d.msg", i)))
		if err != nil {
			return out
		}
		m, err := mail.ReadMessage(bytes.NewReader(raw))
		if err != nil {
			f.t.Fatalf("mail %d unreadable: %v", i, err)
		}
		out = append(out, m)
	}
}

func (f *noticeFixture) notices(job string) []store.NoticeRecord {
	f.t.Helper()
	rs, err := f.db.ReaderFor(store.System).ListNotices(context.Background(), store.NoticeFilter{JobID: job})
	if err != nil {
		f.t.Fatal(err)
	}
	return rs
}

func TestNoticeIdleJobOnceAcrossRestart(t *testing.T) {
	f := newNoticeFixture(t, nil)
	f.startIn("1", "gpu", minorRef(0))
	f.tick(9)
	if n := f.deliver(); n != 0 {
		t.Fatalf("%d notices after 9 s of a 10 s window", n)
	}
	f.tick(11)
	if n := f.deliver(); n != 1 {
		t.Fatalf("%d notices after 20 s idle, want 1", n)
	}
	mails := f.sent()
	if len(mails) != 1 {
		t.Fatalf("%d mails, want 1", len(mails))
	}
	argv, _ := os.ReadFile(filepath.Join(f.mails, "1.argv"))
	if got := strings.Fields(string(argv)); len(got) != 3 || got[0] != "-i" || got[1] != "--" || got[2] != "u1@lab.example" {
		t.Errorf("sendmail argv = %q", got)
	}
	m := mails[0]
	if to := m.Header["To"]; len(to) != 1 || to[0] != "u1@lab.example" || m.Header.Get("Bcc") != "" {
		t.Errorf("headers %v: want one To and no Bcc (the job name tried one)", m.Header)
	}
	rs := f.notices("1")
	if len(rs) != 1 || rs[0].Rule != profile.RuleIdleJob || rs[0].Status != profile.NoticeSent ||
		rs[0].Recipient != "u1@lab.example" || rs[0].User != "u1" || len(rs[0].GPUs) != 1 || rs[0].GPUs[0] != 0 {
		t.Fatalf("recorded notices = %+v", rs)
	}
	if !strings.Contains(rs[0].Evidence, "GPU 0: no process") || !strings.Contains(rs[0].Evidence, "no GPU work since the job started") {
		t.Errorf("evidence %q does not name the GPU and say it was never used", rs[0].Evidence)
	}
	// Idle from the start: no option fixes it (the body says to drop
	// --gres=gpu), as the analysis' unused_gpus hint with none used.
	if rs[0].Fix != "" {
		t.Errorf("fix %q for a job that never used its GPU", rs[0].Fix)
	}
	f.a.mu.Lock()
	inProfile := f.a.jobs["1"].prof.Notices
	f.a.mu.Unlock()
	if len(inProfile) != 1 || inProfile[0].Status != profile.NoticeSent {
		t.Errorf("the profile carries %+v, want the sent notice", inProfile)
	}

	// Restart: a second agent on the same database resumes the job and
	// sends nothing again, however long it stays idle.
	f.a.flush(context.Background())
	f.a = f.noticeAgent()
	if err := f.a.resume(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.tick(60)
	f.deliver()
	if n := len(f.sent()); n != 1 {
		t.Errorf("%d mails after a restart, want still 1", n)
	}

	// The finished profile carries the notice to the collector.
	j := f.end("1", 0)
	if len(j.Notices) != 1 || j.Notices[0].Status != profile.NoticeSent {
		t.Errorf("finished profile notices = %+v", j.Notices)
	}
}

func TestNoticeClaimedBeforeRestartIsNotResent(t *testing.T) {
	// The agent stopped after claiming, before the outcome: the next one
	// finds the claim and sends nothing (at most once).
	f := newNoticeFixture(t, nil)
	f.startIn("2", "gpu", minorRef(0))
	f.a.flush(context.Background()) // the job's row, without notices
	f.tick(20)
	var req noticeReq
	select {
	case req = <-f.a.noticeQ:
	default:
		t.Fatal("no notice queued")
	}
	if ok, err := f.db.ClaimNotice(context.Background(), req.rec); err != nil || !ok {
		t.Fatalf("claim: %v, %v", ok, err)
	}
	f.a = f.noticeAgent()
	if err := f.a.resume(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.tick(30)
	f.deliver()
	// The same decision reaching delivery again (a profile row that lost
	// its notices) is stopped by the claim.
	f.a.deliverNotice(context.Background(), req)
	if n := len(f.sent()); n != 0 {
		t.Errorf("%d mails, want none: the claim was the previous agent's", n)
	}
	if rs := f.notices("2"); len(rs) != 1 || rs[0].Status != profile.NoticePending {
		t.Errorf("notices = %+v, want the one pending claim", rs)
	}
	// The delivery goroutine starts by closing such claims as failed.
	f.a.abandonPending(context.Background())
	rs := f.notices("2")
	if len(rs) != 1 || rs[0].Status != profile.NoticeFailed || !strings.Contains(rs[0].Detail, "not retried") {
		t.Errorf("notices = %+v, want the claim failed, not retried", rs)
	}
	f.a.mu.Lock()
	inProfile := f.a.jobs["2"].prof.Notices
	f.a.mu.Unlock()
	if len(inProfile) != 1 || inProfile[0].Status != profile.NoticeFailed {
		t.Errorf("profile notices = %+v, want the failed one", inProfile)
	}
}

func TestNoticeBusyExemptAndBusyThenIdle(t *testing.T) {
	f := newNoticeFixture(t, nil)
	f.proc(4100, "10", "python", sim.Usage{UUID: f.devs[1].UUID, Mem: 10 * gib, Util: 60})
	f.startIn("10", "gpu", minorRef(1))
	f.startIn("11", "interactive", minorRef(2)) // exempt partition, idle
	f.tick(30)
	if n := f.deliver(); n != 0 {
		t.Fatalf("%d notices for a busy job and an exempt one, want none", n)
	}
	// The busy job's process exits: idle from now on, caught a window
	// later.
	f.node.Unregister(4100)
	f.tick(15)
	if n := f.deliver(); n != 1 {
		t.Fatalf("%d notices after the job went idle, want 1", n)
	}
	rs := f.notices("10")
	if len(rs) != 1 || rs[0].Rule != profile.RuleIdleJob || !rs[0].Since.After(f.now.Add(-16*time.Second)) {
		t.Errorf("notices = %+v, want idle_job since the process ended", rs)
	}
	// A job that worked first is told a shorter limit.
	if !strings.HasPrefix(rs[0].Fix, "--time=") {
		t.Errorf("fix = %q, want a --time", rs[0].Fix)
	}
	if rs := f.notices("11"); len(rs) != 0 {
		t.Errorf("exempt job noticed: %+v", rs)
	}
}

func TestNoticeDailyCapAndNoMail(t *testing.T) {
	f := newNoticeFixture(t, func(c *config.NoticesConfig) { c.DailyCap = 1 })
	for i, id := range []string{"20", "21"} {
		f.do(hookproto.Request{Op: hookproto.OpStart, Start: &hookproto.JobStart{Cluster: "c", Node: "n1", JobID: id, User: "carol", UID: 1000,
			Partition: "gpu", Start: f.now, GPUs: []hookproto.GPURef{minorRef(i)}}})
	}
	f.tick(20)
	if n := f.deliver(); n != 2 {
		t.Fatalf("%d notices, want 2", n)
	}
	statuses := map[string]int{}
	for _, id := range []string{"20", "21"} {
		for _, r := range f.notices(id) {
			statuses[r.Status]++
		}
	}
	if statuses[profile.NoticeSent] != 1 || statuses[profile.NoticeCapped] != 1 || len(f.sent()) != 1 {
		t.Errorf("statuses %v, mails %d: want one sent and one capped", statuses, len(f.sent()))
	}
}

func TestNoticeCancel(t *testing.T) {
	for _, dry := range []bool{false, true} {
		name := "cancel"
		if dry {
			name = "dry run"
		}
		t.Run(name, func(t *testing.T) {
			f := newNoticeFixture(t, func(c *config.NoticesConfig) {
				c.Cancel.Enabled, c.Cancel.Partitions = true, []string{"debug"}
				c.Cancel.Grace, c.Cancel.Wait = config.Duration(5*time.Second), 0
				c.Cancel.DryRun = dry
			})
			f.startIn("30", "debug", minorRef(0))
			f.startIn("31", "gpu", minorRef(1)) // not a cancel partition
			f.tick(12)
			if n := f.deliver(); n != 2 {
				t.Fatalf("%d first notices, want 2 (idle_job of each)", n)
			}
			f.tick(10)
			if n := f.deliver(); n != 1 {
				t.Fatalf("%d notices after the grace, want the one cancel", n)
			}
			rs := f.notices("30")
			var cancel *store.NoticeRecord
			for i := range rs {
				if rs[i].Rule == profile.RuleCancel {
					cancel = &rs[i]
				}
			}
			if cancel == nil {
				t.Fatalf("no cancel notice: %+v", rs)
			}
			calls, _ := os.ReadFile(filepath.Join(f.mails, "scancel"))
			if dry {
				if cancel.Status != profile.NoticeDryRun || len(calls) != 0 || !strings.Contains(cancel.Detail, "would run") {
					t.Errorf("dry run: %+v, scancel calls %q", cancel, calls)
				}
				if n := len(f.sent()); n != 2 {
					t.Errorf("%d mails, want the 2 idle_job ones only", n)
				}
			} else {
				if cancel.Status != profile.NoticeCanceled || string(calls) != "--signal=TERM 30\n30\n" {
					t.Errorf("cancel: %+v, scancel calls %q", cancel, calls)
				}
				if n := len(f.sent()); n != 3 {
					t.Errorf("%d mails, want 3 (two idle_job, the second notice)", n)
				}
			}
			if !strings.Contains(cancel.Evidence, "after the idle-job notice") {
				t.Errorf("cancel evidence %q", cancel.Evidence)
			}
			for _, r := range f.notices("31") {
				if r.Rule == profile.RuleCancel {
					t.Errorf("job outside the cancel partitions: %+v", r)
				}
			}
		})
	}
}

func TestNoticesOffCostsNothing(t *testing.T) {
	f := newFixture(t, nil)
	f.start("40", minorRef(0))
	f.tick(30)
	if f.a.noticeQ != nil {
		t.Error("a notice queue without notices configured")
	}
	f.a.mu.Lock()
	defer f.a.mu.Unlock()
	if st := f.a.jobs["40"]; st.notes.tracker != nil {
		t.Error("a tracker without notices configured")
	}
}

func TestNoticeExemptQOS(t *testing.T) {
	// The QOS is known from squeue only, after the decision: the notice is
	// recorded as exempt and not sent.
	t.Setenv("NOTICE_QOS", "service")
	f := newNoticeFixture(t, func(c *config.NoticesConfig) { c.ExemptQOS = []string{"service"} })
	f.startIn("50", "gpu", minorRef(0))
	f.tick(20)
	if n := f.deliver(); n != 1 {
		t.Fatalf("%d notices decided, want 1", n)
	}
	if rs := f.notices("50"); len(rs) != 1 || rs[0].Status != profile.NoticeExempt {
		t.Errorf("notices = %+v, want one exempt", rs)
	}
	if n := len(f.sent()); n != 0 {
		t.Errorf("%d mails for an exempt QOS", n)
	}
}

func TestNoticeTickDoesNotAllocate(t *testing.T) {
	f := newNoticeFixture(t, func(c *config.NoticesConfig) {
		c.Cancel.Enabled, c.Cancel.Partitions = true, []string{"debug"}
		c.ExemptAccounts, c.ExemptUsers = []string{"other"}, []string{"svc"}
	})
	f.proc(4200, "60", "python", sim.Usage{UUID: f.devs[0].UUID, Mem: 10 * gib, Util: 70},
		sim.Usage{UUID: f.devs[1].UUID, Mem: 10 * gib, Util: 70})
	f.startIn("60", "debug", minorRef(0), minorRef(1))
	f.tick(3)
	f.a.mu.Lock()
	defer f.a.mu.Unlock()
	st := f.a.jobs["60"]
	readings := map[string]reading{}
	for _, g := range st.prof.GPUs {
		readings[g.UUID] = reading{}
	}
	now := f.now
	allocs := testing.AllocsPerRun(500, func() {
		now = now.Add(time.Second)
		for i := range st.prof.GPUs {
			st.noticeObserve(i, profile.Reading{Time: now, Util: gpu.Some[uint32](70), MemUsed: gpu.Some[uint64](10 * gib), Processes: 1})
		}
		f.a.noticeTick(now, st, readings)
	})
	if allocs != 0 {
		t.Errorf("the notice rules allocate %v times per tick for a busy 2-GPU job, want 0", allocs)
	}
}

func TestNoticeWhileRunning(t *testing.T) {
	// The real loops on the wall clock, fast: sampling, flushing and
	// delivery run at once (run with -race to check their sharing).
	f := newNoticeFixture(t, func(c *config.NoticesConfig) {
		c.IdleJob.Window = config.Duration(200 * time.Millisecond)
	})
	f.cfg.Rules.Interval = 20 * time.Millisecond
	a, err := New(context.Background(), Options{
		Cluster: "c", Node: "n1", Socket: filepath.Join(f.dir, "run.sock"),
		Interval: 20 * time.Millisecond, FlushInterval: 30 * time.Millisecond, SeriesPoints: 64,
		Procfs: f.procfs, CgroupRoot: filepath.Join(f.dir, "cgroup"), Notices: f.cfg,
	}, f.node, f.db, f.spool, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	// Wait for Run to listen (and log its start) before the hook's
	// request, as a real prolog would.
	for start := time.Now(); time.Since(start) < 5*time.Second; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(f.dir, "run.sock")); err == nil {
			break
		}
	}
	time.Sleep(100 * time.Millisecond)
	var resp hookproto.Response
	if err := a.Handle(ctx, hookproto.Request{Op: hookproto.OpStart, Start: &hookproto.JobStart{Cluster: "c", Node: "n1", JobID: "70", User: "u70",
		UID: 1000, Partition: "gpu", Start: time.Now(), GPUs: []hookproto.GPURef{minorRef(3)}}}, &resp); err != nil {
		t.Fatal(err)
	}
	// Sent when its record says so (the mail file may be half written
	// before).
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if rs := f.notices("70"); len(rs) == 1 && rs[0].Status != profile.NoticePending {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n := len(f.sent()); n != 1 {
		t.Fatalf("%d mails within 10 s of a 200 ms window, want 1", n)
	}
	time.Sleep(200 * time.Millisecond) // more ticks and flushes
	if err := a.Handle(ctx, hookproto.Request{Op: hookproto.OpEnd, End: &hookproto.JobEnd{JobStart: hookproto.JobStart{Cluster: "c", Node: "n1", JobID: "70"},
		End: time.Now()}}, &resp); err != nil {
		t.Fatal(err)
	}
	if n := len(f.sent()); n != 1 {
		t.Errorf("%d mails, want 1", n)
	}
}

// TestNoticeShardJobNotOversized (issue #38): a --gres=shard:2 job alone
// on its GPU, quiet and small, is a shard job to the agent: slurmctld's
// allocation (squeue %b) reaches its profile, and it gets no "holds a
// whole GPU" notice telling it to ask for --gres=shard:1. The same job
// on a whole GPU gets that notice.
func TestNoticeShardJobNotOversized(t *testing.T) {
	f := newNoticeFixture(t, func(c *config.NoticesConfig) {
		c.Oversized.Enabled = true
		c.Oversized.Window = config.Duration(10 * time.Second)
		c.Oversized.UtilBelow = 30
		c.Oversized.MemoryShare = 0.25
		c.Oversized.Shards = "yes"
	})
	run := func(job string, dev int, gres string) []store.NoticeRecord {
		t.Setenv("NOTICE_GRES", gres)
		f.proc(4200+dev, job, "python", sim.Usage{UUID: f.devs[dev].UUID, Mem: 2 * gib, Util: 15})
		f.startIn(job, "gpu", minorRef(dev))
		f.a.lookups.Wait()
		f.tick(30)
		f.deliver()
		return f.notices(job)
	}

	if rs := run("30", 0, "gres:shard:2"); len(rs) != 0 {
		t.Errorf("a shard:2 job got %+v, want no notice", rs)
	}
	f.a.mu.Lock()
	p := f.a.jobs["30"].prof
	f.a.mu.Unlock()
	if p.Shards != 2 || !p.AllocKnown {
		t.Errorf("profile shards %d (known %t), want slurmctld's 2", p.Shards, p.AllocKnown)
	}
	// /metrics says so beside the job's GPU series.
	f.a.opts.MetricsJobsToken = testMetricsToken
	fams := scrape(t, f.a.MetricsHandler(), false)
	if ms := fams["gpuprof_job_gpu_shards"].GetMetric(); len(ms) != 1 || ms[0].GetGauge().GetValue() != 2 {
		t.Errorf("gpuprof_job_gpu_shards = %v, want one series of 2 for job 30", ms)
	}
	for _, m := range f.sent() {
		var b bytes.Buffer
		_, _ = b.ReadFrom(m.Body)
		if s := b.String(); strings.Contains(s, "whole GPU") || strings.Contains(s, "shard:1") {
			t.Errorf("mail to a shard job: %s", s)
		}
	}

	rs := run("31", 1, "gres/gpu:1")
	if len(rs) != 1 || rs[0].Rule != profile.RuleOversized || rs[0].Fix != "--gres=shard:1" {
		t.Errorf("a whole-GPU job got %+v, want the oversized notice with --gres=shard:1", rs)
	}
}
