package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/config"
	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/store"
)

// The controller side: slurmctld's jobcomp hook and the sacct history
// import, checked against what Slurm's own accounting says.

const (
	// ctlPrefix names the jobs of TestSchedulerViewMatchesSacct.
	ctlPrefix = "e2e-ctl-"
	// recordTimeout bounds the wait for jobcomp records, profiles and
	// slurmdbd after the queue emptied.
	recordTimeout = 45 * time.Second
)

// ctlJob is one job of TestSchedulerViewMatchesSacct.
type ctlJob struct {
	name   string
	sbatch []string
	script string
	// action is done to the job after submission: "cancel-pending"
	// (scancel at once; submit it held), "cancel-running" (scancel once it
	// has run a few seconds), "requeue" (scontrol requeue once it has run a
	// few seconds, then let it start again at once).
	action string
	// What sacct must show: every row's state and how many rows (array
	// tasks) the job has.
	wantState string
	wantRows  int
	// ran: the job reached the node, so it has a GPU profile.
	ran bool
	// wantMemPeak, when set, is the memory peak of the job's final run on
	// its GPU.
	wantMemPeak uint64
}

func burnCmd(bin, mem, util string, d time.Duration) string {
	return fmt.Sprintf("%s simgpu burn --mem %s --util %s --for %s", shellQuote(bin), mem, util, d)
}

// ctlJobs is the mix: every final state jobcomp and sacct report, an array,
// a requeued job, whole GPUs and shards.
func ctlJobs(bin string) []ctlJob {
	return []ctlJob{
		// First: the time limit is the longest wait of the run (Slurm checks
		// limits every 30 s, then KillWait).
		{name: "timeout", sbatch: []string{"--gres=gpu:1", "--time=1"},
			script: burnCmd(bin, "1GiB", "20", 5*time.Minute), wantState: "TIMEOUT", wantRows: 1, ran: true},
		{name: "completed", sbatch: []string{"--gres=gpu:1", "--time=10"},
			script: burnCmd(bin, "2GiB", "30", 3*time.Second), wantState: "COMPLETED", wantRows: 1, ran: true},
		{name: "failed", sbatch: []string{"--gres=gpu:1", "--time=1-00:00:00"},
			script: burnCmd(bin, "1GiB", "40", 2*time.Second) + "; exit 3", wantState: "FAILED", wantRows: 1, ran: true},
		{name: "two-gpus", sbatch: []string{"--gres=gpu:2", "--time=90"},
			script: burnCmd(bin, "1GiB,2GiB", "50,60", 3*time.Second), wantState: "COMPLETED", wantRows: 1, ran: true},
		{name: "shard-a", sbatch: []string{"--gres=shard:2", "--time=5"},
			script: burnCmd(bin, "1GiB", "10", 3*time.Second), wantState: "COMPLETED", wantRows: 1, ran: true},
		{name: "shard-b", sbatch: []string{"--gres=shard:3"},
			script: burnCmd(bin, "1GiB", "10", 3*time.Second), wantState: "COMPLETED", wantRows: 1, ran: true},
		{name: "cancel-pending", sbatch: []string{"--gres=gpu:1", "--time=10", "--hold"},
			script: burnCmd(bin, "1GiB", "10", 3*time.Second), action: "cancel-pending", wantState: "CANCELLED", wantRows: 1},
		{name: "cancel-running", sbatch: []string{"--gres=gpu:1", "--time=10"},
			script: burnCmd(bin, "1GiB", "10", 5*time.Minute), action: "cancel-running", wantState: "CANCELLED", wantRows: 1, ran: true},
		{name: "array", sbatch: []string{"--gres=gpu:1", "--time=10", "--array=1-3"},
			script: burnCmd(bin, "1GiB", "10", 2*time.Second), wantState: "COMPLETED", wantRows: 3, ran: true},
		// The first run holds 1 GiB until requeued; the second 3 GiB, for
		// 8 s: the agent finds that run from its processes (22.05 runs no
		// prolog for it) at a sample while slurmd holds its step, and a
		// loaded CI machine delays samples (3 s once went unseen).
		{name: "requeue", sbatch: []string{"--gres=gpu:1", "--time=10", "--requeue"},
			script: `if [ "${SLURM_RESTART_COUNT:-0}" = 0 ]; then touch "requeue-started.$SLURM_JOB_ID"; ` + burnCmd(bin, "1GiB", "10", 5*time.Minute) +
				"; else " + burnCmd(bin, "3GiB", "10", 8*time.Second) + "; fi",
			action: "requeue", wantState: "COMPLETED", wantRows: 1, ran: true, wantMemPeak: 3 << 30},
	}
}

// TestSchedulerViewMatchesSacct runs a job mix on a real Slurm with
// accounting whose jobcomp/script is `gpuprof jobcomp`, then compares the
// scheduler view `gpuprof jobs --json` gives — from jobcomp alone, then
// after `gpuprof import sacct` — with sacct, job by job and field by field.
func TestSchedulerViewMatchesSacct(t *testing.T) {
	requireClusterHost(t)
	t.Parallel()
	bin := gpuprofBinary(t)
	work := t.TempDir()
	if err := os.Chmod(work, 0o755); err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(work, "gpuprof.toml")
	c := startCluster(t, clusterOptions{Accounting: true, JobComp: true, GPUProfBin: bin, GPUProfConfig: cfgPath, HookEnv: true})
	simDir := filepath.Join(work, "sim")
	if err := os.Mkdir(simDir, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(simDir, 0o777); err != nil {
		t.Fatal(err)
	}
	// One database for the agent and jobcomp: the single-host setup.
	cfg := writeCaptureConfig(t, cfgPath, work, simDir, filepath.Join(c.Dir, "etc", "gres.conf"))
	agentOut := filepath.Join(work, "agent.out")
	agent := startProcess(t, agentOut, os.Environ(), bin, "agent", "--config", cfgPath)
	t.Cleanup(func() {
		if t.Failed() {
			for _, f := range []string{agentOut, cfg.LogFile} {
				if data, err := os.ReadFile(f); err == nil {
					t.Logf("==== %s (last 80 lines)\n%s", f, lastLines(string(data), 80))
				}
			}
		}
	})
	waitAgent(t, agent, cfg.Socket, agentOut)

	jobs := ctlJobs(bin)
	ids := make([]string, len(jobs))
	byName := map[string]*ctlJob{}
	errs := make(chan error, len(jobs))
	actions := 0
	for i := range jobs {
		j := &jobs[i]
		byName[ctlPrefix+j.name] = j
		args := append([]string{"--parsable", "-J", ctlPrefix + j.name, "-o", "/dev/null", "--chdir", work,
			"--export=ALL,GPUPROF_CONFIG=" + cfgPath}, j.sbatch...)
		ids[i] = c.run(t, "sbatch", append(args, "--wrap", j.script)...)
		switch j.action {
		case "cancel-pending":
			c.run(t, "scancel", ids[i])
		case "cancel-running":
			actions++
			go func() { errs <- cancelWhenRunning(c, ids[i], 3*time.Second, func() bool { return true }) }()
		case "requeue":
			actions++
			go func() {
				errs <- requeueWhenRunning(c, ids[i], filepath.Join(work, "requeue-started."+ids[i]), 4*time.Second)
			}()
		}
	}
	t.Logf("submitted %s", strings.Join(ids, ","))
	waitQueueDrained(t, c, queueTimeout)
	for range actions {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}

	rows := waitSacct(t, c, ids, jobs)
	for _, r := range rows {
		j := byName[r.name]
		if j == nil {
			t.Fatalf("sacct lists job %s named %q, which this test did not submit", r.id, r.name)
		}
		if base := baseState(r.state); base != j.wantState {
			t.Fatalf("the job mix did not go as planned: %s (%s) ended %q, want %s", r.name, r.id, r.state, j.wantState)
		}
	}

	t.Run("jobcomp-alone", func(t *testing.T) {
		views := waitViews(t, bin, cfgPath, func(vs map[string]jobJSON) string {
			for _, r := range rows {
				v, ok := vs[r.id]
				switch {
				case !ok || v.Sched == nil:
					return "job " + r.id + " has no scheduler view"
				case string(v.Sched.State) != baseState(r.state):
					return fmt.Sprintf("job %s is %s, want %s", r.id, v.Sched.State, baseState(r.state))
				case byName[r.name].ran && !finishedProfile(v):
					return "job " + r.id + " has no finished profile"
				}
			}
			return ""
		})
		for _, r := range rows {
			v := views[r.id]
			if v.Sched.Source != "jobcomp" {
				t.Errorf("job %s (%s): sched.source = %q, want jobcomp (no import ran yet)", r.id, r.name, v.Sched.Source)
			}
			// jobcomp knows all of this; TRES and the "by <uid>" of a
			// cancellation only sacct has.
			compareSched(t, r, v, false)
		}
		if len(views) != len(rows) {
			t.Errorf("gpuprof jobs lists %d jobs, sacct %d: %v vs %v", len(views), len(rows), keys(views), rowIDs(rows))
		}
	})

	t.Run("after-import", func(t *testing.T) {
		out := importSacct(t, c, bin, cfgPath)
		if read, _, _, _, skipped := importCounts(t, out); skipped != 0 || read == 0 {
			t.Errorf("import: %q, want every line read and none skipped", out)
		}
		views := gpuprofViews(t, bin, cfgPath)
		for _, r := range rows {
			v, ok := views[r.id]
			if !ok || v.Sched == nil {
				t.Errorf("job %s (%s): no scheduler view after the import", r.id, r.name)
				continue
			}
			// Both reports are final with the same end: the later one, the
			// import's, wins (store.PutSchedJob).
			if v.Sched.Source != "sacct" {
				t.Errorf("job %s (%s): sched.source = %q after the import, want sacct: `gpuprof import sacct` did not import it "+
					"(sacct -S/-E without --state lists only jobs that became eligible; this one was %s)",
					r.id, r.name, v.Sched.Source, r.state)
			}
			compareSched(t, r, v, true)
			j := byName[r.name]
			switch {
			case j.ran && slices.Contains(v.Missing, "gpu_profile"):
				t.Errorf("job %s (%s): missing %v, want a GPU profile (the job ran)", r.id, r.name, v.Missing)
			case !j.ran && !slices.Contains(v.Missing, "gpu_profile"):
				t.Errorf("job %s (%s): missing %v, want [gpu_profile] (it never started)", r.id, r.name, v.Missing)
			}
			if slices.Contains(v.Missing, "scheduler_view") {
				t.Errorf("job %s (%s): missing %v lists scheduler_view, but sched is set", r.id, r.name, v.Missing)
			}
			if j.ran && r.gpus > 0 {
				for _, p := range v.Profiles {
					if len(p.GPUs) != r.gpus {
						t.Errorf("job %s (%s): profile on %s has %d GPUs, sacct ReqTRES asked for %d", r.id, r.name, p.Node, len(p.GPUs), r.gpus)
					}
				}
			}
		}
		if len(views) != len(rows) {
			t.Errorf("gpuprof jobs lists %d jobs, sacct %d: %v vs %v", len(views), len(rows), keys(views), rowIDs(rows))
		}
		// Re-importing the same window changes nothing.
		out = importSacct(t, c, bin, cfgPath)
		if read, ins, upd, same, _ := importCounts(t, out); ins != 0 || upd != 0 || same != read {
			t.Errorf("second import: %q, want every job unchanged", out)
		}
	})

	t.Run("requeued", func(t *testing.T) {
		var r sacctRow
		for _, x := range rows {
			if x.name == ctlPrefix+"requeue" {
				r = x
			}
		}
		v := gpuprofViews(t, bin, cfgPath)[r.id]
		if v.Sched == nil {
			t.Fatalf("job %s: no scheduler view", r.id)
		}
		if v.Sched.Restarts < 1 {
			t.Errorf("job %s: restarts = %d, want ≥ 1 (it was requeued once)", r.id, v.Sched.Restarts)
		}
		// The profile must be the final run's: the run the scheduler view
		// describes (start, end, exit).
		if len(v.Profiles) != 1 {
			t.Fatalf("job %s: %d profiles, want 1", r.id, len(v.Profiles))
		}
		p := v.Profiles[0]
		if p.Start.Before(v.Sched.Start.Add(-time.Second)) {
			t.Errorf("job %s: profile starts %s, before the final run started (%s): it is the profile of the run that was requeued",
				r.id, p.Start.Format(time.RFC3339Nano), v.Sched.Start.Format(time.RFC3339))
		}
		if len(p.GPUs) == 1 && p.GPUs[0].MemPeak != byName[r.name].wantMemPeak {
			t.Errorf("job %s: profile mem_peak = %d, want %d (the final run's program)", r.id, p.GPUs[0].MemPeak, byName[r.name].wantMemPeak)
		}
	})
}

// requeueWhenRunning requeues a job once its batch script has run for d
// (started: the file the script's first run creates), and lets it start
// again at once: Slurm holds a requeued job back for the credential lifetime
// (120 s by default) otherwise. RUNNING alone is not enough: slurmctld says
// RUNNING from the allocation, and a launch still on its way when the job
// was requeued reached slurmd after the second run's (slurmd:
// "slurm_script: File exists", launch failed, the job held).
func requeueWhenRunning(c *cluster, id, started string, d time.Duration) error {
	if err := waitJobState(c, id, "RUNNING"); err != nil {
		return fmt.Errorf("requeue: %w", err)
	}
	deadline := time.Now().Add(queueTimeout)
	for {
		if _, err := os.Stat(started); err == nil {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("requeue: job %s's script did not start within %s (no %s)", id, queueTimeout, started)
		}
		time.Sleep(200 * time.Millisecond)
	}
	time.Sleep(d)
	if _, err := c.output("scontrol", "requeue", id); err != nil {
		return err
	}
	// Until the old run has completed, Slurm may still push the begin time
	// back: repeat until the job runs again.
	deadline = time.Now().Add(queueTimeout)
	for {
		state, err := c.jobState(id)
		switch {
		case err != nil:
			return err
		case state == "PENDING":
			_, _ = c.output("scontrol", "update", "JobId="+id, "StartTime=now")
		case state == "RUNNING" || state == "":
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("requeued job %s: state %q after %s", id, state, queueTimeout)
		}
		time.Sleep(time.Second)
	}
}

func waitJobState(c *cluster, id, want string) error {
	deadline := time.Now().Add(queueTimeout)
	for {
		state, err := c.jobState(id)
		if err != nil {
			return err
		}
		if state == want {
			return nil
		}
		if state == "" || time.Now().After(deadline) {
			return fmt.Errorf("job %s: state %q, waited for %s", id, state, want)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// waitQueueDrained waits until the cluster's queue is empty: every job and
// array task has ended (waitQueueEmpty compares ids, which array tasks do
// not show as).
func waitQueueDrained(t *testing.T, c *cluster, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		out := c.run(t, "squeue", "-h", "-o", "%i %T %j %r")
		if out == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s, jobs still queued:\n%s", timeout, out)
		}
		time.Sleep(time.Second)
	}
}

// sacctRow is one allocation as sacct reports it, parsed independently of
// gpuprof's own sacct reader.
type sacctRow struct {
	id, name, user, account, partition, state string
	submit, start, end                        time.Time
	limit                                     string // as printed
	exit, signal                              int
	reqTRES                                   string
	gpus, shards                              int // gres/gpu and gres/shard in ReqTRES
}

// sacctFormat is what the test asks sacct for.
const sacctFormat = "JobIDRaw,JobName,User,Account,Partition,State,Submit,Start,End,Timelimit,ExitCode,ReqTRES"

// waitSacct returns sacct's rows for the given jobs (array tasks included)
// once slurmdbd has them all in their final state. It selects by job id:
// a time window (-S/-E without --state) leaves out jobs that never became
// eligible, such as a job cancelled while held.
func waitSacct(t *testing.T, c *cluster, ids []string, jobs []ctlJob) []sacctRow {
	t.Helper()
	want := 0
	for _, j := range jobs {
		want += j.wantRows
	}
	deadline := time.Now().Add(recordTimeout)
	for {
		rows, err := sacctRows(c, ids)
		if err != nil {
			t.Fatal(err)
		}
		final := len(rows) == want
		for _, r := range rows {
			switch baseState(r.state) {
			case "PENDING", "RUNNING", "REQUEUED", "COMPLETING", "SUSPENDED":
				final = false
			}
		}
		if final {
			return rows
		}
		if time.Now().After(deadline) {
			t.Fatalf("sacct: %d rows %+v, want %d in final states", len(rows), rows, want)
		}
		time.Sleep(time.Second)
	}
}

func sacctRows(c *cluster, ids []string) ([]sacctRow, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sacct", "-a", "-X", "-P", "--noheader", "-j", strings.Join(ids, ","), "--format="+sacctFormat)
	cmd.Env = c.env("SLURM_TIME_FORMAT=%s")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("sacct: %w\n%s", err, stderr.String())
	}
	var rows []sacctRow
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		if line == "" {
			continue
		}
		f := strings.Split(line, "|")
		if len(f) != strings.Count(sacctFormat, ",")+1 {
			return nil, fmt.Errorf("sacct line %q: %d fields, want %d", line, len(f), strings.Count(sacctFormat, ",")+1)
		}
		r := sacctRow{id: f[0], name: f[1], user: f[2], account: f[3], partition: f[4], state: f[5], limit: f[9], reqTRES: f[11]}
		var errs []error
		r.submit, errs = sacctTime(f[6], errs)
		r.start, errs = sacctTime(f[7], errs)
		r.end, errs = sacctTime(f[8], errs)
		ec, sig, ok := strings.Cut(f[10], ":")
		var e1, e2 error
		r.exit, e1 = strconv.Atoi(ec)
		r.signal, e2 = strconv.Atoi(sig)
		if !ok || e1 != nil || e2 != nil {
			errs = append(errs, fmt.Errorf("ExitCode %q", f[10]))
		}
		for kv := range strings.SplitSeq(r.reqTRES, ",") {
			k, v, _ := strings.Cut(kv, "=")
			n, _ := strconv.Atoi(v)
			switch k {
			case "gres/gpu":
				r.gpus = n
			case "gres/shard":
				r.shards = n
			}
		}
		if len(errs) > 0 {
			return nil, fmt.Errorf("sacct line %q: %v", line, errors.Join(errs...))
		}
		rows = append(rows, r)
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].id < rows[j].id })
	return rows, nil
}

// sacctTime reads an epoch-seconds time; Unknown and None are no time.
func sacctTime(s string, errs []error) (time.Time, []error) {
	switch s {
	case "", "Unknown", "None":
		return time.Time{}, errs
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}, append(errs, fmt.Errorf("time %q", s))
	}
	return time.Unix(n, 0), errs
}

// sacctLimit reads a Timelimit: unlimited, or a duration; ok is false for
// values with no limit of the job's own (Partition_Limit).
func sacctLimit(s string) (d time.Duration, unlimited, ok bool) {
	switch s {
	case "UNLIMITED", "INFINITE":
		return 0, true, true
	case "Partition_Limit", "":
		return 0, false, false
	}
	days := 0
	if dd, rest, found := strings.Cut(s, "-"); found {
		n, err := strconv.Atoi(dd)
		if err != nil {
			return 0, false, false
		}
		days, s = n, rest
	}
	parts := strings.Split(s, ":")
	if len(parts) != 3 {
		return 0, false, false
	}
	var hms [3]int
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil {
			return 0, false, false
		}
		hms[i] = n
	}
	return time.Duration(days)*24*time.Hour + time.Duration(hms[0])*time.Hour +
		time.Duration(hms[1])*time.Minute + time.Duration(hms[2])*time.Second, false, true
}

func baseState(s string) string {
	f := strings.Fields(s) // "CANCELLED by 0"
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

func rowIDs(rows []sacctRow) []string {
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = r.id
	}
	return ids
}

// compareSched checks the scheduler view of one job against sacct. With
// tres, the GPUs requested (sacct's ReqTRES, which jobcomp does not have)
// are checked too.
func compareSched(t *testing.T, r sacctRow, v jobJSON, tres bool) {
	t.Helper()
	s := v.Sched
	what := fmt.Sprintf("job %s (%s, source %s)", r.id, r.name, s.Source)
	eq := func(field, got, want string) {
		if got != want {
			t.Errorf("%s: %s = %q, sacct says %q", what, field, got, want)
		}
	}
	eq("job_id", v.JobID, r.id)
	eq("sched.job_id", s.JobID, r.id)
	eq("user", s.User, r.user)
	eq("account", s.Account, r.account)
	eq("partition", s.Partition, r.partition)
	eq("state", string(s.State), baseState(r.state))
	for _, tt := range []struct {
		field     string
		got, want time.Time
	}{{"submit", s.Submit, r.submit}, {"start", s.Start, r.start}, {"end", s.End, r.end}} {
		if tt.got.IsZero() != tt.want.IsZero() || (!tt.want.IsZero() && tt.got.Unix() != tt.want.Unix()) {
			t.Errorf("%s: %s = %s, sacct says %s", what, tt.field, fmtTime(tt.got), fmtTime(tt.want))
		}
	}
	if d, unlimited, ok := sacctLimit(r.limit); ok {
		if s.Unlimited != unlimited || s.TimeLimit != d {
			t.Errorf("%s: time limit = %s (unlimited %t), sacct says %s", what, s.TimeLimit, s.Unlimited, r.limit)
		}
	} else if !s.Unlimited && s.TimeLimit != 0 {
		// Partition_Limit: the job had no limit of its own.
		t.Errorf("%s: time limit = %s, sacct says %s (none of its own)", what, s.TimeLimit, r.limit)
	}
	if s.ExitStatus != r.exit || s.ExitSignal != r.signal {
		t.Errorf("%s: exit = %d:%d, sacct says %d:%d", what, s.ExitStatus, s.ExitSignal, r.exit, r.signal)
	}
	if !tres {
		return
	}
	switch {
	case v.GPUsReq == nil:
		t.Errorf("%s: gpus_requested = null, sacct ReqTRES %q asks for %d", what, r.reqTRES, r.gpus)
	case *v.GPUsReq != r.gpus:
		t.Errorf("%s: gpus_requested = %d, sacct ReqTRES %q asks for %d", what, *v.GPUsReq, r.reqTRES, r.gpus)
	}
	if s.ReqShards != r.shards {
		t.Errorf("%s: req_shards = %d, sacct ReqTRES %q asks for %d", what, s.ReqShards, r.reqTRES, r.shards)
	}
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "(none)"
	}
	return t.UTC().Format(time.RFC3339)
}

func finishedProfile(v jobJSON) bool {
	return len(v.Profiles) > 0 && !slices.ContainsFunc(v.Profiles, func(p profile.Job) bool { return p.Status != profile.StatusFinished })
}

// gpuprofViews runs `gpuprof jobs --json` and returns the jobs by id.
func gpuprofViews(t *testing.T, bin, cfgPath string, extra ...string) map[string]jobJSON {
	t.Helper()
	out, err := gpuprofOutput(bin, append([]string{"jobs", "--json", "--config", cfgPath}, extra...)...)
	if err != nil {
		t.Fatal(err)
	}
	return decodeViews(t, out)
}

func decodeViews(t *testing.T, out []byte) map[string]jobJSON {
	t.Helper()
	var vs []jobJSON
	if err := json.Unmarshal(out, &vs); err != nil {
		t.Fatalf("gpuprof jobs --json: %v\n%s", err, out)
	}
	m := make(map[string]jobJSON, len(vs))
	for _, v := range vs {
		if _, dup := m[v.JobID]; dup {
			t.Errorf("gpuprof jobs --json lists job %s twice", v.JobID)
		}
		m[v.JobID] = v
	}
	return m
}

// waitViews polls `gpuprof jobs --json` until pending returns "" (nothing
// awaited) and returns the views; it fails with pending's last answer.
func waitViews(t *testing.T, bin, cfgPath string, pending func(map[string]jobJSON) string) map[string]jobJSON {
	t.Helper()
	return pollViews(t, bin, cfgPath, nil, pending)
}

// waitIngestedViews is waitViews on a controller where neither an agent
// nor serve runs: there an ingest pass is the database's writer, which
// applies what jobcomp spooled. Each poll runs `gpuprof ingest` first.
func waitIngestedViews(t *testing.T, bin, cfgPath string, pending func(map[string]jobJSON) string) map[string]jobJSON {
	t.Helper()
	return pollViews(t, bin, cfgPath, func() {
		if out, err := gpuprofOutput(bin, "ingest", "--config", cfgPath); err != nil {
			t.Fatalf("gpuprof ingest: %v\n%s", err, out)
		}
	}, pending)
}

func pollViews(t *testing.T, bin, cfgPath string, before func(), pending func(map[string]jobJSON) string) map[string]jobJSON {
	t.Helper()
	deadline := time.Now().Add(recordTimeout)
	for {
		if before != nil {
			before()
		}
		vs := gpuprofViews(t, bin, cfgPath)
		why := pending(vs)
		if why == "" {
			return vs
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s: %s", recordTimeout, why)
		}
		time.Sleep(time.Second)
	}
}

// importSacct runs `gpuprof import sacct` live (it runs sacct itself) and
// returns its summary line.
func importSacct(t *testing.T, c *cluster, bin, cfgPath string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "import", "sacct", "--config", cfgPath)
	cmd.Env = c.env()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("gpuprof import sacct: %v\n%s%s", err, out, stderr.String())
	}
	if strings.Contains(stderr.String(), "skipped:") {
		t.Errorf("gpuprof import sacct skipped lines:\n%s", stderr.String())
	}
	t.Logf("gpuprof import sacct: %s", strings.TrimSpace(string(out)))
	return strings.TrimSpace(string(out))
}

// importCounts parses the import's summary line.
func importCounts(t *testing.T, line string) (read, inserted, updated, unchanged, skipped int) {
	t.Helper()
	if _, err := fmt.Sscanf(line, "%d jobs read: %d new, %d updated, %d unchanged; %d skipped",
		&read, &inserted, &updated, &unchanged, &skipped); err != nil {
		t.Fatalf("import summary %q: %v", line, err)
	}
	return read, inserted, updated, unchanged, skipped
}

// jobcompEnv is the environment slurmctld's jobcomp/script gives its
// program for one job (slurmext.ParseJobCompEnv lists the variables).
func jobcompEnv(r slurmext.JobRecord, uid int, user string) []string {
	limit := "UNLIMITED"
	if !r.Unlimited {
		d := r.TimeLimit
		limit = fmt.Sprintf("%02d:%02d:%02d", int(d.Hours()), int(d.Minutes())%60, int(d.Seconds())%60)
	}
	arrayJob, arrayTask := "0", "4294967294"
	if r.ArrayJobID != "" {
		arrayJob, arrayTask = r.ArrayJobID, strconv.Itoa(r.ArrayTaskID)
	}
	return []string{
		"PATH=/usr/bin:/bin:/usr/sbin:/sbin",
		"JOBID=" + r.JobID, "ARRAYJOBID=" + arrayJob, "ARRAYTASKID=" + arrayTask,
		"UID=" + strconv.Itoa(uid), "GID=" + strconv.Itoa(uid), "USERNAME=" + user, "GROUPNAME=" + user,
		"JOBNAME=" + r.Name, "JOBSTATE=" + string(r.State), "PARTITION=" + r.Partition, "QOS=normal",
		"ACCOUNT=" + r.Account, "CLUSTER=" + r.Cluster, "NODES=gpu01", "NODECNT=1", "PROCS=4",
		"SUBMIT=" + strconv.FormatInt(r.Submit.Unix(), 10), "START=" + strconv.FormatInt(r.Start.Unix(), 10),
		"END=" + strconv.FormatInt(r.End.Unix(), 10), "LIMIT=" + limit,
		fmt.Sprintf("EXITCODE=%d:%d", r.ExitStatus, r.ExitSignal), "DERIVED_EC=0:0",
		"BATCH=yes", "WORK_DIR=/home/" + user, "RESERVATION=", "DEPENDENCY=", "CONSTRAINTS=", "STATEREASONPREV=None",
	}
}

// runJobComp runs `gpuprof jobcomp` with exactly env (as env -i would) and
// returns how long the process took; it fails the test on a non-zero exit
// or any output (slurmctld does not read it).
func runJobComp(t *testing.T, bin, cfgPath string, env []string) time.Duration {
	t.Helper()
	cmd := exec.Command(bin, "jobcomp", "--config", cfgPath)
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	if err != nil {
		t.Errorf("gpuprof jobcomp (%s): %v, want exit 0\n%s", env[1], err, out.String())
	}
	if out.Len() > 0 {
		t.Errorf("gpuprof jobcomp (%s) printed %q, want nothing", env[1], out.String())
	}
	return took
}

// TestJobCompDeadlineWithLockedDB holds the controller database's write lock
// for lockHold while slurmctld-style jobcomp calls arrive: each must exit 0
// within its deadline (slurmctld waits for each, one at a time), and every
// record must reach the database once the lock is gone.
//
// Not parallel: it measures wall-clock times, which other tests' load would
// skew.
func TestJobCompDeadlineWithLockedDB(t *testing.T) {
	const (
		calls    = 20
		deadline = 200 * time.Millisecond
		slack    = 100 * time.Millisecond
		// wallBound holds a whole jobcomp process, start included.
		wallBound = 2 * time.Second
		lockHold  = 30 * time.Second
		cluster   = "lockt"
	)
	bin := gpuprofBinary(t)
	work := t.TempDir()
	c := config.Default()
	c.Cluster = cluster
	c.DB = filepath.Join(work, "ctl.db")
	c.SpoolDir = filepath.Join(work, "spool")
	c.LogFile = filepath.Join(work, "gpuprof.log")
	c.JobComp.Deadline = config.Duration(deadline)
	cfgPath := writeConfigFile(t, filepath.Join(work, "gpuprof.toml"), c)

	ctx := context.Background()
	db, err := store.Open(ctx, c.DB, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// The lock holder: an open write transaction, as a stuck backup or an
	// sqlite3 shell would hold it, in this process (not gpuprof's).
	locked, release, lockDone := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		lockDone <- db.WithTx(ctx, func(*store.Tx) error {
			close(locked)
			<-release
			return nil
		})
	}()
	select {
	case <-locked:
	case err := <-lockDone:
		t.Fatalf("take the write lock: %v", err)
	}
	lockedAt := time.Now()
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})

	base := time.Now().Add(-time.Hour).Truncate(time.Second)
	states := []struct {
		state        string
		exit, signal int
	}{{"COMPLETED", 0, 0}, {"FAILED", 3, 0}, {"TIMEOUT", 0, 0}, {"CANCELLED", 0, 15}, {"OUT_OF_MEMORY", 0, 0}}
	want := make(map[string]slurmext.JobRecord, calls)
	took := make([]time.Duration, 0, calls)
	for i := range calls {
		st := states[i%len(states)]
		r := slurmext.JobRecord{
			Cluster: cluster, JobID: strconv.Itoa(5000 + i), Name: fmt.Sprintf("train-%d", i),
			Account: "lab", Partition: "gpu", State: slurmext.JobState(st.state),
			Submit: base.Add(time.Duration(i) * time.Minute), Start: base.Add(time.Duration(i)*time.Minute + 7*time.Second),
			End:       base.Add(time.Duration(i)*time.Minute + 50*time.Second),
			TimeLimit: time.Duration(i+1) * 10 * time.Minute, ExitStatus: st.exit, ExitSignal: st.signal,
		}
		if i%4 == 3 {
			r.ArrayJobID, r.ArrayTaskID = "4999", i
		}
		uid, user := 2000+i%3, fmt.Sprintf("user%d", i%3)
		r.UID, r.User = uid, user
		want[r.JobID] = r
		took = append(took, runJobComp(t, bin, cfgPath, jobcompEnv(r, uid, user)))
	}
	if since := time.Since(lockedAt); since >= lockHold {
		t.Fatalf("the calls took %s, longer than the lock was to be held (%s): the test proves nothing", since, lockHold)
	}
	sorted := slices.Clone(took)
	slices.Sort(sorted)
	p50, p99 := sorted[len(sorted)/2], sorted[(len(sorted)*99+99)/100-1]
	t.Logf("jobcomp with the database locked, %d calls: p50 %s, p99 %s, max %s (deadline %s)",
		calls, p50.Round(time.Millisecond), p99.Round(time.Millisecond), sorted[len(sorted)-1].Round(time.Millisecond), deadline)
	// The deadline bounds the hook's own work, which it logs (took=): that
	// is what is held to it. The wall-clock time of each process adds its
	// start, which a loaded 2-core CI machine has stretched past 400 ms;
	// it is held only to what tells a bounded hook from one that waits for
	// the lock (held lockHold).
	for i, d := range took {
		if d > wallBound {
			t.Errorf("call %d took %s of wall-clock time, want ≤ %s (the lock is held %s)", i, d.Round(time.Millisecond), wallBound, lockHold)
		}
	}
	logged := hookTook(t, c.LogFile)
	if len(logged) != calls {
		t.Errorf("%d jobcomp calls logged their time (took=), want %d", len(logged), calls)
	}
	for i, d := range logged {
		if d > deadline+slack {
			t.Errorf("logged call %d took %s by its own measure, want ≤ deadline %s + %s", i, d.Round(time.Millisecond), deadline, slack)
		}
	}

	// None could reach the database: all must be in the spool.
	spooled, err := os.ReadDir(c.SpoolDir)
	if err != nil {
		t.Fatalf("spool: %v", err)
	}
	if n := countFiles(spooled); n != calls {
		t.Errorf("%d records in the spool while the database was locked, want %d", n, calls)
	}
	time.Sleep(time.Until(lockedAt.Add(lockHold)))
	close(release)
	if err := <-lockDone; err != nil {
		t.Fatalf("lock holder: %v", err)
	}

	out, err := gpuprofOutput(bin, "ingest", "--config", cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(out)); got != fmt.Sprintf("%d records ingested", calls) {
		t.Errorf("gpuprof ingest: %q, want %d records ingested", got, calls)
	}
	views := gpuprofViews(t, bin, cfgPath)
	for id, r := range want {
		v, ok := views[id]
		if !ok || v.Sched == nil {
			t.Errorf("job %s: no scheduler record after ingest: lost", id)
			continue
		}
		s := v.Sched
		if s.Source != "jobcomp" || s.State != r.State || s.User != r.User || s.UID != r.UID || s.Name != r.Name ||
			!s.Submit.Equal(r.Submit) || !s.Start.Equal(r.Start) || !s.End.Equal(r.End) || s.TimeLimit != r.TimeLimit ||
			s.ExitStatus != r.ExitStatus || s.ExitSignal != r.ExitSignal || s.ArrayJobID != r.ArrayJobID {
			t.Errorf("job %s: recorded %+v\nwant %+v", id, *s, r)
		}
	}
	if len(views) != calls {
		t.Errorf("gpuprof jobs lists %d jobs, want %d", len(views), calls)
	}
	if left, err := os.ReadDir(c.SpoolDir); err != nil || countFiles(left) != 0 {
		t.Errorf("spool after ingest: %d records (%v), want none", countFiles(left), err)
	}
	logData, _ := os.ReadFile(c.LogFile)
	if n := strings.Count(string(logData), "via=spool"); n != calls {
		t.Errorf("log: %d jobcomp calls say via=spool, want %d\n%s", n, calls, lastLines(string(logData), 40))
	}
}

// hookTook returns the times the hooks that logged to path measured of
// themselves (the took= of their "done" lines), in log order.
func hookTook(t *testing.T, path string) []time.Duration {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("hook log: %v", err)
	}
	var out []time.Duration
	for _, line := range strings.Split(string(data), "\n") {
		if !strings.Contains(line, "msg=done") {
			continue
		}
		_, v, ok := strings.Cut(line, " took=")
		if !ok {
			continue
		}
		v, _, _ = strings.Cut(v, " ")
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Errorf("hook log: took=%q: %v", v, err)
			continue
		}
		out = append(out, d)
	}
	return out
}

func countFiles(es []os.DirEntry) int {
	n := 0
	for _, e := range es {
		if !e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			n++
		}
	}
	return n
}
