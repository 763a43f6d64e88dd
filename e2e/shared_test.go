package e2e

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// shared is the one accounting cluster of a go test run (slurmdbd and
// MariaDB, jobcomp, the hooks handed out by partition): started by the
// first test that asks for it (sharedCluster), stopped by TestMain after
// the last test (stopShared). A test on it works in a scope of its own.
var shared struct {
	once sync.Once
	c    *cluster
	took time.Duration
	// up is when the cluster's daemons were up (launch returned).
	up  time.Time
	err error
	// scopes counts the scopes handed out: each takes the next name.
	scopes atomic.Int64
	// sacctmgr serialises the scopes' accounting changes. Tests adding
	// their accounts at the same moment deadlocked MariaDB inside
	// slurmdbd (slurmdbd.log: "deadlock detected attempt 1/10"); slurmdbd
	// retried the failed query alone, after InnoDB had rolled back its
	// transaction, so sacctmgr said the account was added and the next
	// `add user` found none (seen: two of four tests that got the
	// cluster at once).
	sacctmgr sync.Mutex
	// node is the lease on the cluster's one node (nodeLease): a scoped
	// test holds it shared for its whole test (sharedCluster), a
	// whole-node test alone (wholeNode) until it shares it or ends.
	node nodeLease
}

// scopedAtOnce is how many scoped tests may hold the node's lease at once:
// as many as ran together before, when go test's slots bounded them, less
// one, since beside a whole-node test that shared the node its own jobs
// hold a GPU or two.
const scopedAtOnce = 3

// nodeLease is the shared cluster's node lease (doc.go, "The node's
// lease"). A whole-node test takes it alone once no one holds it; while
// any whole-node test waits, scoped tests wait too, so the whole-node
// tests run one after another, except while one of them has shared the
// node (share): then scoped tests come in beside it, scopedAtOnce at
// most, and a waiting whole-node test waits for them too.
type nodeLease struct {
	mu   sync.Mutex
	cond *sync.Cond
	// alone: a whole-node test holds the node alone.
	alone bool
	// scoped counts the scoped tests holding it; opened the whole-node
	// tests holding it after they shared it; waiting the whole-node tests
	// waiting for it, queued the scoped ones.
	scoped, opened, waiting, queued int
	// ranks are the waiting whole-node tests' ranks (wholeNodeRank): the
	// lowest goes first.
	ranks []int
}

// wholeNodeOrder is the order in which waiting whole-node tests get the
// node: first those that share it early and long (their scoped tests run
// beside them), last those that keep it alone to their end, so that no
// scoped test is left to wait after them. A test not listed goes last.
var wholeNodeOrder = []string{
	"TestNoticesUnderSlurm",
	"TestForeignProcessesCannotClaimJobs",
	"TestCaptureUnderSlurm",
	"TestWhatIfReplaysRealQueue",
	"TestWhatIfSaysWhatItDoesNotReproduce",
	"TestNeverStartedRealJobs",
}

// wholeNodeRank is a whole-node test's place in wholeNodeOrder.
func wholeNodeRank(name string) int {
	if i := slices.Index(wholeNodeOrder, name); i >= 0 {
		return i
	}
	return len(wholeNodeOrder)
}

// wait waits on the lease's condition; l.mu is held.
func (l *nodeLease) wait() {
	if l.cond == nil {
		l.cond = sync.NewCond(&l.mu)
	}
	l.cond.Wait()
}

func (l *nodeLease) wake() {
	if l.cond != nil {
		l.cond.Broadcast()
	}
}

// lockScoped takes the lease for a scoped test.
func (l *nodeLease) lockScoped() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.queued++
	l.wake()
	for l.alone || l.scoped >= scopedAtOnce || l.waiting > 0 && l.opened == 0 {
		l.wait()
	}
	l.queued--
	l.scoped++
}

func (l *nodeLease) unlockScoped() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.scoped--
	l.wake()
}

// lockAlone takes the lease for a whole-node test of rank rank: once no
// one holds it and no waiting whole-node test has a lower rank.
func (l *nodeLease) lockAlone(rank int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.waiting++
	l.ranks = append(l.ranks, rank)
	l.wake()
	for l.alone || l.scoped > 0 || l.opened > 0 || rank > slices.Min(l.ranks) {
		l.wait()
	}
	l.waiting--
	l.ranks = slices.Delete(l.ranks, slices.Index(l.ranks, rank), slices.Index(l.ranks, rank)+1)
	l.alone = true
	l.wake()
}

// share turns a whole-node test's lease into a shared one: scoped tests
// may come in beside it.
func (l *nodeLease) share() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.alone = false
	l.opened++
	l.wake()
}

// unlockWhole releases a whole-node test's lease, shared or not.
func (l *nodeLease) unlockWhole(shared bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if shared {
		l.opened--
	} else {
		l.alone = false
	}
	l.wake()
}

// scope is one test's part of the shared cluster: a partition of the node
// and an account of its own, both named Name, under which it submits
// every job (sbatch); that partition's hooks record into the test's own
// gpuprof (hooks). Tests isolate by partition, account and job ids: they
// wait on their own jobs (waitDrained), read sacct for their own ids or
// account, and never for the whole cluster. A test may add partitions of
// its own (addPartition), named after Name.
type scope struct {
	*cluster
	Name string
	// parts are the scope's partitions: Name, then addPartition's and
	// confPartition's.
	parts []string
	// exclusive: the scope is a whole-node test's (wholeNode).
	exclusive bool
	// undo removes what the scope made on the cluster (its partitions,
	// confPartition's jobs and wrappers), last first; release gives back
	// its lease. end runs both, once.
	undo    []func()
	release func()
	ended   sync.Once
	// alone is when a whole-node scope got the node to itself; shared
	// whether it has shared it since (share).
	alone  time.Time
	shared bool
	closed bool
}

// sharedCluster returns a new scope of the run's shared cluster, starting
// the cluster on the first call, and holds the node's lease shared until
// the test ends: other scopes run beside it, a whole-node test
// (wholeNode) not. The partition is removed when the test ends, its jobs
// cancelled first.
func sharedCluster(t *testing.T) *scope {
	t.Helper()
	return newScope(t, false)
}

// wholeNode returns a new scope of the run's shared cluster for a test
// that needs the node to itself: all four GPUs free, Slurm's placement as
// on an idle node, every job on it the test's. It takes the node's lease
// exclusively — it waits until no other test's scope is open and keeps new
// ones out (lease) — and then waits until squeue lists no job at all (a
// scope's cancelled jobs may still be completing). The test still submits
// under its scope's partitions and account, its partitions' hooks run its
// own gpuprof, and it reads sacct for its own account: the lease is what
// keeps other jobs off the node, not a wider scope. Call it after
// t.Parallel (doc.go says why). Once the test no longer needs the node to
// itself, it gives it back early: share when its jobs are placed and
// other tests' jobs beside them change nothing it checks, end when its
// jobs have left the queue and the rest reads only what they left.
func wholeNode(t *testing.T) *scope {
	t.Helper()
	s := newScope(t, true)
	deadline := time.Now().Add(2 * time.Minute)
	for {
		out := s.run(t, "squeue", "-h", "-o", "%i %P %T %j")
		if out == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the node's lease is this test's, but after 2m0s squeue still lists jobs:\n%s", out)
		}
		time.Sleep(time.Second)
	}
	s.alone = time.Now()
	t.Logf("the shared cluster's node is this test's alone (exclusive lease, queue empty)")
	return s
}

// share lets scoped tests onto the node beside a whole-node test's jobs,
// which stay its own: call it once Slurm has placed the jobs that needed
// the node to themselves and what the test checks from then on cannot
// change with other tests' jobs beside them (another whole-node test still
// waits until this one ends).
func (s *scope) share(t testing.TB) {
	t.Helper()
	if !s.exclusive || s.shared {
		t.Fatalf("share: scope %s holds no whole-node lease of its own", s.Name)
	}
	shared.node.share()
	s.shared = true
	s.release = func() { shared.node.unlockWhole(true) }
	t.Logf("the shared cluster's node shared after %s alone", time.Since(s.alone).Round(time.Second))
}

// end gives back the scope at once rather than when the test ends: its
// jobs are cancelled, its partitions removed, confPartition's wrappers
// too, and its lease released. Call it when the rest of the test reads
// only what its jobs left (sacct, its own files).
func (s *scope) end(t testing.TB) {
	t.Helper()
	if s.exclusive && !s.closed && !s.alone.IsZero() {
		t.Logf("the shared cluster's node given back %s after this test got it alone", time.Since(s.alone).Round(time.Second))
	}
	s.close()
}

// close runs the scope's undo, last first, then releases its lease; once.
func (s *scope) close() {
	s.ended.Do(func() {
		s.closed = true
		for i := len(s.undo) - 1; i >= 0; i-- {
			s.undo[i]()
		}
		if s.release != nil {
			s.release()
		}
	})
}

// lease takes the shared cluster's node lease for s, alone or shared
// (s.exclusive), and says in s.release how to give it back.
func (s *scope) lease(t *testing.T) {
	t.Helper()
	start := time.Now()
	if s.exclusive {
		shared.node.lockAlone(wholeNodeRank(t.Name()))
		s.release = func() { shared.node.unlockWhole(false) }
	} else {
		shared.node.lockScoped()
		s.release = shared.node.unlockScoped
	}
	if waited := time.Since(start); waited > time.Second {
		t.Logf("waited %s for the shared node's lease (whole node: %t)", waited.Round(time.Second), s.exclusive)
	}
}

// startShared starts the shared cluster on the first call and fails (or
// skips) the test where it did not start.
func startShared(t *testing.T) {
	t.Helper()
	requireSlurmHost(t)
	shared.once.Do(func() {
		dir, err := os.MkdirTemp("", "gpuprof-e2e-shared-")
		if err == nil {
			// Jobs, hooks and agents run as other users too.
			err = os.Chmod(dir, 0o755)
		}
		if err != nil {
			shared.err = err
			return
		}
		shared.c = newCluster(dir)
		shared.took, shared.err = shared.c.launch(clusterOptions{Accounting: true, JobComp: true, MailProg: true, HookEnv: true, ByPartition: true})
		shared.up = time.Now()
		if shared.err == nil {
			fmt.Fprintf(os.Stderr, "e2e: shared cluster up in %s (%s)\n", dir, shared.took.Round(time.Millisecond))
		}
	})
	if errors.Is(shared.err, errNoSlurm) {
		skipOrFail(t, "%v", shared.err)
	}
	if shared.err != nil {
		t.Fatalf("shared cluster: %v", shared.err)
	}
}

// firstBackfill is how long after slurmctld starts its first backfill
// cycle may run: the backfill agent counts bf_interval from its own start
// (backfill.c, backfill_agent: last_backfill_time is set when the agent
// starts, then it sleeps bf_interval), and the test cluster runs Slurm's
// default of 30 s; 5 s more for the agent's start and the cycle's checks.
const firstBackfill = 35 * time.Second

// waitFirstBackfill starts the shared cluster if no test has and waits
// until its slurmctld's first backfill cycle is past. A test that compares
// a replay's start times with Slurm's calls it before it submits: a
// replay sees only sacct, not when slurmctld started, so it backfills
// from the window's start where a fresh slurmctld cannot yet. In a full
// run TestPrometheusScrape has started the cluster well before (the
// sequential phase) and this waits for nothing; run alone (go test -run),
// the test would submit seconds after the cluster came up. Call it before
// wholeNode, so that the node serves other tests while it waits.
func waitFirstBackfill(t *testing.T) {
	t.Helper()
	startShared(t)
	if d := time.Until(shared.up.Add(firstBackfill)); d > 0 {
		t.Logf("waiting %s for the shared cluster's first backfill cycle (slurmctld up %s)", d.Round(time.Second), time.Since(shared.up).Round(time.Second))
		time.Sleep(d)
	}
}

// scopePrefix begins the name of every scope (e2e1, e2e2, …) and so of
// every partition a scope makes (its own, addPartition's).
const scopePrefix = "e2e"

// scopeMade says whether a partition of the shared cluster is one a scope
// made at run time (scontrol create): slurm.conf does not list it.
func scopeMade(partition string) bool {
	rest, ok := strings.CutPrefix(partition, scopePrefix)
	return ok && rest != "" && rest[0] >= '0' && rest[0] <= '9'
}

// sharedConf starts the shared cluster if no test has and returns it, for
// a test that only reads its configuration (slurm.conf, scontrol): such a
// test needs no scope and no lease, since it submits nothing. Partitions
// for which scopeMade is true come and go as the scopes do.
func sharedConf(t *testing.T) *cluster {
	t.Helper()
	startShared(t)
	return shared.c
}

// newScope makes a scope (partition, account, root's association) and
// then takes the node's lease for it: making them changes nothing on the
// node, so a test does it while another holds the node.
func newScope(t *testing.T, exclusive bool) *scope {
	t.Helper()
	startShared(t)
	s := &scope{cluster: shared.c, Name: fmt.Sprintf("%s%d", scopePrefix, shared.scopes.Add(1)), exclusive: exclusive}
	// Registered first, so it runs last.
	t.Cleanup(func() { s.end(t) })
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("shared cluster %s, this test's partitions %v and account %s\n%s", s.Dir, s.parts, s.Name, s.logTails())
		}
	})
	s.createPartition(t, s.Name)
	s.addAccount(t)
	s.addUser(t, "root")
	s.lease(t)
	t.Logf("shared cluster %s: partition and account %s", s.Dir, s.Name)
	return s
}

// addPartition adds a partition of the node to the scope, named Name and
// suffix (letters, digits, - and _), and returns its name. Jobs in it are
// the scope's (submit them with -A Name); hooks installs its wrappers
// too. It is removed when the test ends, its jobs cancelled first.
func (s *scope) addPartition(t testing.TB, suffix string) string {
	t.Helper()
	p := s.Name + suffix
	s.createPartition(t, p)
	return p
}

// confPartition adds slurm.conf's partition name (testcluster.sh's gpu)
// to a whole-node scope, for a test whose jobs must run in a partition of
// slurm.conf: gpuprof whatif builds the cluster it replays from
// slurm.conf and leaves out jobs of any other partition. Only a test
// holding the node (wholeNode) may: while it does, the partition's jobs
// are its own. hooks installs the partition's wrappers too; when the test
// ends its jobs in it are cancelled and the wrappers removed, the
// partition kept.
func (s *scope) confPartition(t testing.TB, name string) string {
	t.Helper()
	if !s.exclusive {
		t.Fatalf("partition %s of slurm.conf is every test's: only a test holding the node (wholeNode) may use it", name)
	}
	s.parts = append(s.parts, name)
	s.undo = append(s.undo, func() {
		_, _ = s.output("scancel", "-p", name)
		deadline := time.Now().Add(time.Minute)
		for {
			out, err := s.output("squeue", "-h", "-p", name)
			if err == nil && out == "" || time.Now().After(deadline) {
				break
			}
			time.Sleep(time.Second)
		}
		_ = os.RemoveAll(filepath.Join(s.Dir, "hooks", "p", name))
	})
	return name
}

// createPartition creates partition p and removes it when the test ends.
func (s *scope) createPartition(t testing.TB, p string) {
	t.Helper()
	s.run(t, "scontrol", "create", "PartitionName="+p, "Nodes=localhost", "MaxTime=INFINITE", "State=UP")
	s.parts = append(s.parts, p)
	s.undo = append(s.undo, func() {
		_, _ = s.output("scancel", "-p", p)
		// The partition goes once its cancelled jobs have left the
		// queue, their epilogs done: slurmctld deletes a partition whose
		// jobs are still completing, and their epilog (the test's own
		// hooks) then wrote into the test's directory while go test
		// removed it ("TempDir RemoveAll cleanup: … directory not
		// empty", TestRunningJobShownWhileItRuns in one CI run of
		// 2cd9544). squeue lists a completing job until its epilog ends.
		deadline := time.Now().Add(time.Minute)
		for {
			out, err := s.output("squeue", "-h", "-p", p)
			if err == nil && strings.TrimSpace(out) == "" {
				if _, err = s.output("scontrol", "delete", "PartitionName="+p); err == nil {
					break
				}
			}
			if time.Now().After(deadline) {
				// Harmless: the cluster goes at the end of the run.
				t.Logf("partition %s not removed: %v", p, err)
				break
			}
			time.Sleep(time.Second)
		}
	})
}

// stopShared stops the shared cluster, if a test started it, and removes
// its directory; it prints the daemons' logs when the run failed.
func stopShared(failed bool) {
	c := shared.c
	if c == nil {
		return
	}
	if err := c.stop(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: shared cluster:", err)
		failed = true
	}
	if failed {
		fmt.Fprintf(os.Stderr, "e2e: shared cluster %s\n%s", c.Dir, c.logTails())
	}
	_ = os.RemoveAll(c.Dir)
}

// addAccount adds the scope's account, one scope at a time, and checks
// that slurmdbd kept it (shared.sacctmgr says why).
func (s *scope) addAccount(t testing.TB) {
	t.Helper()
	shared.sacctmgr.Lock()
	defer shared.sacctmgr.Unlock()
	s.run(t, "sacctmgr", "-i", "add", "account", s.Name)
	if out := s.run(t, "sacctmgr", "-n", "-P", "show", "account", s.Name, "format=account"); out != s.Name {
		t.Fatalf("sacctmgr added account %s, but show account lists %q", s.Name, out)
	}
}

// addUser gives a Unix user an association with the scope's account, so
// that its jobs can be charged to it.
func (s *scope) addUser(t testing.TB, user string) {
	t.Helper()
	func() {
		// t.Fatal in run must not leave the lock held.
		shared.sacctmgr.Lock()
		defer shared.sacctmgr.Unlock()
		s.run(t, "sacctmgr", "-i", "add", "user", user, "account="+s.Name)
	}()
	// slurmdbd tells slurmctld a moment later; a job charged to the
	// account before that could be refused.
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, err := s.output("scontrol", "show", "assoc_mgr", "users="+user, "accounts="+s.Name, "flags=assoc")
		if err == nil && assocListed(out, s.Name, user) {
			return
		}
		if time.Now().After(deadline) {
			// sbatch says so if it refuses the account.
			t.Logf("slurmctld does not list user %s in account %s after 30s: %v\n%s", user, s.Name, err, out)
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// assocListed says whether `scontrol show assoc_mgr flags=assoc` printed
// the association of user in account: a line with Account=ACCOUNT and
// UserName=USER or UserName=USER(UID).
func assocListed(out, account, user string) bool {
	for line := range strings.SplitSeq(out, "\n") {
		f := strings.Fields(line)
		if slices.Contains(f, "Account="+account) && slices.ContainsFunc(f, func(w string) bool {
			return w == "UserName="+user || strings.HasPrefix(w, "UserName="+user+"(")
		}) {
			return true
		}
	}
	return false
}

// sbatch submits a job in the scope's partition and account and returns
// its id (sbatch --parsable; a cluster name after ";" is dropped).
func (s *scope) sbatch(t testing.TB, args ...string) string {
	t.Helper()
	id := s.run(t, "sbatch", append([]string{"--parsable", "-p", s.Name, "-A", s.Name}, args...)...)
	id, _, _ = strings.Cut(id, ";")
	return id
}

// hooks makes the scope's partitions (those added so far) run the gpuprof
// hooks (contrib/slurm's wrappers, as an admin installs them) on bin with
// config; they log to HooksLog (the scope's first partition's) and beside
// it for the others.
func (s *scope) hooks(t testing.TB, bin, config string) {
	t.Helper()
	for _, p := range s.parts {
		s.partitionHooks(t, p, bin, config)
	}
}

// partitionHooks makes the scope's partition p run the gpuprof hooks on
// bin with config, as hooks does for all of them.
func (s *scope) partitionHooks(t testing.TB, p, bin, config string) {
	t.Helper()
	cmd := exec.Command("bash", s.script, "hooks", s.Dir, p)
	cmd.Env = append(os.Environ(), "GPUPROF_BIN="+bin, "GPUPROF_CONFIG="+config)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("testcluster.sh hooks %s: %v\n%s", p, err, out)
	}
}

// withoutJobComp removes the jobcomp wrappers hooks wrote: the cluster's
// jobcomp then does nothing for the scope's jobs (testcluster.sh
// --by-partition), as on a cluster with no JobCompType. Call it after
// hooks (or partitionHooks), again after adding more.
func (s *scope) withoutJobComp(t testing.TB) {
	t.Helper()
	for _, p := range s.parts {
		if err := os.Remove(filepath.Join(s.Dir, "hooks", "p", p, "jobcomp")); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
}

// HooksLog is the log of the scope's hook wrappers.
func (s *scope) HooksLog() string {
	return filepath.Join(s.Dir, "hooks", "p", s.Name, "hooks.log")
}

// waitPlaced waits until none of the scope's jobs is pending, or none of
// ids where ids are given: Slurm has placed every one (those that ran
// already have left the queue).
func (s *scope) waitPlaced(t testing.TB, timeout time.Duration, ids ...string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		// Read by partition and kept by id: squeue -j fails for an id
		// slurmctld has forgotten.
		var pending []string
		for line := range strings.SplitSeq(s.run(t, "squeue", "-h", "-t", "PENDING", "-p", strings.Join(s.parts, ","), "-o", "%i %T %j %r"), "\n") {
			if f := strings.Fields(line); len(f) > 0 && (len(ids) == 0 || slices.Contains(ids, f[0])) {
				pending = append(pending, line)
			}
		}
		out := strings.Join(pending, "\n")
		if out == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s, jobs of partitions %v still pending:\n%s", timeout, s.parts, out)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// waitDrained waits until none of the scope's jobs is in the queue.
func (s *scope) waitDrained(t testing.TB, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		out := s.run(t, "squeue", "-h", "-p", s.Name, "-o", "%i %T %j %r")
		if out == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s, jobs of partition %s still queued:\n%s", timeout, s.Name, out)
		}
		time.Sleep(time.Second)
	}
}

// importOwnAccount makes `gpuprof import sacct` with the configuration
// file cfgPath read the scope's account only: its [import] sacct becomes a
// script in dir running sacct -A ACCOUNT with the importer's arguments.
// cfgPath must have no [import] table of its own.
func (s *scope) importOwnAccount(t *testing.T, cfgPath, dir string) {
	t.Helper()
	sacct, err := exec.LookPath("sacct")
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "sacct-"+s.Name)
	writeFile(t, script, fmt.Sprintf("#!/bin/sh\nexec %s -A %s \"$@\"\n", sacct, s.Name))
	if err := os.Chmod(script, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(cfgPath, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := fmt.Fprintf(f, "\n[import]\nsacct = %q\n", script); err != nil {
		t.Fatal(err)
	}
}
