package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestHookCrashOnCluster: on the real test cluster, with the contrib
// wrappers installed as Prolog, Epilog and JobCompLoc (testcluster.sh) over
// a gpuprof test build whose hooks segfault in C, get SIGKILLed, panic on a
// goroutine or on their own goroutine, every job still completes (a failed
// prolog would requeue and hold it) and the node never drains (a failed
// prolog or epilog drains it); the wrappers logged each crash with its job
// id, and the stacks are in log_file. It runs on the shared cluster, the
// faulty build its partition's hooks.
func TestHookCrashOnCluster(t *testing.T) {
	requireClusterHost(t)
	t.Parallel()
	faulty := buildFaultyGpuprof(t)
	dir := t.TempDir()
	faultFile := filepath.Join(dir, "fault")
	// slurmd and slurmctld pass no environment of ours: a stand-in binary
	// reads the fault to inject from a file and execs the test build.
	bin := filepath.Join(dir, "gpuprof")
	writeFile(t, bin, "#!/bin/sh\nGPUPROF_FAULT=$(/bin/cat "+faultFile+") exec "+faulty+" \"$@\"\n")
	if err := os.Chmod(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	logFile := filepath.Join(dir, "log", "gpuprof.log")
	cfg := filepath.Join(dir, "gpuprof.toml")
	writeFile(t, cfg, `db = "`+filepath.Join(dir, "gpuprof.db")+`"
spool_dir = "`+filepath.Join(dir, "spool")+`"
socket = "`+filepath.Join(dir, "agent.sock")+`"
query_socket = "`+filepath.Join(dir, "run", "query.sock")+`"
log_file = "`+logFile+`"
[agent]
gpu = "sim"
[sim]
dir = "`+filepath.Join(dir, "sim")+`"
`)
	c := sharedCluster(t)
	c.hooks(t, bin, cfg)

	faults := []struct {
		fault   string
		status  string   // the status the wrappers log; "" when gpuprof exits 0
		inStack []string // in log_file
	}{
		{fault: "segv", status: "2", inStack: []string{"SIGSEGV", "signal arrived during cgo execution"}},
		{fault: "kill", status: "137"},
		{fault: "goroutine", status: "2", inStack: []string{"panic: injected fault: panic in a goroutine"}},
		{fault: "panic", inStack: []string{"hook panicked", "injected fault: panic in a hook"}},
	}
	for _, f := range faults {
		t.Run(f.fault, func(t *testing.T) {
			writeFile(t, faultFile, f.fault+"\n")
			id := c.sbatch(t, "-o", "/dev/null", "-J", "crash-"+f.fault, "--gres=gpu:1", "--wrap", "true")
			// A prolog that failed would leave the job requeued and held.
			c.waitQueueEmpty(t, []string{id}, queueTimeout)
			if out := c.run(t, "scontrol", "-o", "show", "job", id); !strings.Contains(out, "JobState=COMPLETED") {
				t.Errorf("job %s: %s, want COMPLETED", id, out)
			}
			if state := c.run(t, "sinfo", "-h", "-N", "-o", "%T"); strings.Contains(strings.ToLower(state), "drain") {
				t.Errorf("node state %q after a job whose hooks crashed with %s, want not drained\n%s",
					state, f.fault, c.run(t, "sinfo", "-h", "-N", "-o", "%T %E"))
			}
			// jobcomp runs at the job's end, concurrently with the epilog:
			// wait for its line before reading the logs.
			hooksLog := c.HooksLog()
			wantLines := []string{}
			if f.status != "" {
				for _, kind := range []string{"prolog", "epilog", "jobcomp"} {
					wantLines = append(wantLines, kind+" wrapper: job "+id+": "+bin+" exited with status "+f.status)
				}
			}
			deadline := time.Now().Add(20 * time.Second)
			for {
				data, _ := os.ReadFile(hooksLog)
				var missing []string
				for _, l := range wantLines {
					if !strings.Contains(string(data), l) {
						missing = append(missing, l)
					}
				}
				if len(missing) == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("hooks.log lacks %q:\n%s", missing, data)
				}
				time.Sleep(200 * time.Millisecond)
			}
			logged, _ := os.ReadFile(logFile)
			for _, want := range append(f.inStack, "hookcmd.injectFault") {
				if f.inStack != nil && !strings.Contains(string(logged), want) {
					t.Errorf("log_file lacks %q", want)
				}
			}
			if f.fault == "panic" {
				for _, kind := range []string{"prolog", "epilog", "jobcomp"} {
					if !hasLineWith(string(logged), "hook panicked", "hook="+kind, "job="+id, "stack=") {
						t.Errorf("log_file has no panic of %s for job %s with its stack:\n%s", kind, id, logged)
					}
				}
			}
		})
	}
}

// hasLineWith says whether one line of text contains every part.
func hasLineWith(text string, parts ...string) bool {
	for line := range strings.SplitSeq(text, "\n") {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(line, p)
		}
		if all {
			return true
		}
	}
	return false
}
