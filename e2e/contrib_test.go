package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/config"
)

// The files an admin installs from contrib/ must work as shipped; these
// tests need neither root nor Slurm.

func TestConfigExampleIsDefaults(t *testing.T) {
	path := filepath.Join(moduleRoot(t), "contrib", "slurm", "gpuprof.toml.example")
	got, err := config.Load(path, true)
	if err != nil {
		t.Fatalf("load %s: %v", path, err)
	}
	// The example claims to show the defaults except where marked.
	want := config.Default()
	want.LogFile = "/var/log/gpuprof/gpuprof.log"
	if !reflect.DeepEqual(got, want) {
		t.Errorf("example config:\n got %+v\nwant %+v", got, want)
	}
}

// TestHookWrappers runs the production wrappers with slurmd's bare
// environment (no PATH) against a stand-in binary: they run the installed
// path unless GPUPROF_BIN names another (only tests and testcluster.sh set
// it: slurmd and slurmctld build the hook environment from scratch).
func TestHookWrappers(t *testing.T) {
	const installed, packaged = "/usr/local/bin/gpuprof", "/usr/bin/gpuprof"
	for _, w := range wrappers {
		t.Run(w.kind, func(t *testing.T) {
			src, err := os.ReadFile(filepath.Join(moduleRoot(t), "contrib", "slurm", w.file))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(src), "GPUPROF_BIN:-"+installed+"}") {
				t.Fatalf("%s does not run %s by default", w.file, installed)
			}
			// Then the package's binary, the users' command on their PATH.
			if !strings.Contains(string(src), "|| bin="+packaged+"\n") {
				t.Errorf("%s does not fall back to %s", w.file, packaged)
			}
			if strings.Contains(string(src), "exec \"$bin\"") || strings.Contains(string(src), "exec "+installed) {
				t.Errorf("%s execs gpuprof: a crash would reach Slurm", w.file)
			}
			dir := t.TempDir()
			record := filepath.Join(dir, "args")
			fake := filepath.Join(dir, "gpuprof")
			fakeSrc := "#!/bin/sh\necho \"$# $*\" >" + record + "\nexit 0\n"
			if err := os.WriteFile(fake, []byte(fakeSrc), 0o755); err != nil {
				t.Fatal(err)
			}

			// slurmd execs the hook directly: the #! line matters, and the
			// environment has no PATH.
			out, err := runWrapper(t, w, dir, fake, nil)
			if err != nil || len(out) > 0 {
				t.Fatalf("%s: %v, output %q; want exit 0 and no output", w.file, err, out)
			}
			got, err := os.ReadFile(record)
			if err != nil {
				t.Fatalf("%s did not run gpuprof: %v", w.file, err)
			}
			if want := "3 " + w.kind + " --config /etc/gpuprof/gpuprof.toml\n"; string(got) != want {
				t.Errorf("gpuprof ran with %q, want %q", got, want)
			}

			// Without the binary the hook must still exit 0: a failing hook
			// drains the node.
			if out, err := runWrapper(t, w, dir, filepath.Join(dir, "absent"), nil); err != nil || len(out) > 0 {
				t.Errorf("%s without gpuprof installed: %v, output %q; want exit 0, no output", w.file, err, out)
			}
		})
	}
}

// TestHookWrapperOneScript: prolog.sh, epilog.sh and jobcomp.sh are one
// script (links to hook.sh) that takes its hook from slurmd's
// SLURM_SCRIPT_CONTEXT, else from the name it runs under, else from
// jobcomp's JOBID; when none says, it runs nothing, logs why and exits 0.
func TestHookWrapperOneScript(t *testing.T) {
	root := filepath.Join(moduleRoot(t), "contrib", "slurm")
	for _, w := range wrappers {
		if target, err := os.Readlink(filepath.Join(root, w.file)); err != nil || target != "hook.sh" {
			t.Errorf("%s is a link to %q (%v), want a link to hook.sh: one wrapper under three names", w.file, target, err)
		}
	}
	src, err := os.ReadFile(filepath.Join(root, "hook.sh"))
	if err != nil {
		t.Fatal(err)
	}
	run := func(kind string) string { return "3 " + kind + " --config /etc/gpuprof/gpuprof.toml\n" }
	tests := []struct {
		name, file string
		env        []string
		want       string // gpuprof's arguments; "" when it must not run
	}{
		{name: "neutral name, slurmd's prolog", file: "50-gpuprof", env: []string{"SLURM_JOB_ID=7", "SLURM_SCRIPT_CONTEXT=prolog_slurmd"}, want: run("prolog")},
		{name: "neutral name, slurmd's epilog", file: "50-gpuprof", env: []string{"SLURM_JOB_ID=7", "SLURM_SCRIPT_CONTEXT=epilog_slurmd"}, want: run("epilog")},
		{name: "slurmd's word beats the name", file: "prolog.sh", env: []string{"SLURM_JOB_ID=7", "SLURM_SCRIPT_CONTEXT=epilog_slurmd"}, want: run("epilog")},
		{name: "name without slurmd's word", file: "gpuprof-jobcomp.sh", env: []string{"JOBID=7"}, want: run("jobcomp")},
		{name: "neutral name, jobcomp's environment", file: "50-gpuprof", env: []string{"JOBID=7"}, want: run("jobcomp")},
		{name: "nothing says", file: "50-gpuprof", env: []string{"SLURM_JOB_ID=7"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, tt.file)
			if err := os.WriteFile(path, src, 0o755); err != nil {
				t.Fatal(err)
			}
			record := filepath.Join(dir, "args")
			fake := filepath.Join(dir, "gpuprof")
			if err := os.WriteFile(fake, []byte("#!/bin/sh\necho \"$# $*\" >"+record+"\nexit 0\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			log := filepath.Join(dir, "hooks.log")
			cmd := exec.Command(path)
			cmd.Env = append([]string{"GPUPROF_BIN=" + fake, "GPUPROF_HOOK_LOG=" + log}, tt.env...)
			if out, err := cmd.CombinedOutput(); err != nil || len(out) > 0 {
				t.Fatalf("%v, output %q; want exit 0 and no output", err, out)
			}
			got, err := os.ReadFile(record)
			switch {
			case tt.want == "" && err == nil:
				t.Errorf("gpuprof ran with %q, want it not run", got)
			case tt.want == "":
				logged, _ := os.ReadFile(log)
				if !strings.Contains(string(logged), "gpuprof not run") || !strings.Contains(string(logged), "exiting 0") {
					t.Errorf("log %q, want a line saying why gpuprof was not run", logged)
				}
			case string(got) != tt.want:
				t.Errorf("gpuprof ran with %q (%v), want %q", got, err, tt.want)
			}
		})
	}
}

// TestHookWrappersRunHookBinary: the wrappers run gpuprof-hook, with
// gpuprof's arguments, when it is installed with gpuprof: beside it (make
// build's bin/), or in PREFIX/lib/gpuprof for PREFIX/bin/gpuprof (make
// install, the package); else gpuprof itself.
func TestHookWrappersRunHookBinary(t *testing.T) {
	tests := []struct {
		name, gpuprof, hook string // paths under the test's directory; hook "" when none
		hookMode            os.FileMode
		wantHook            bool
	}{
		{name: "beside", gpuprof: "bin/gpuprof", hook: "bin/gpuprof-hook", hookMode: 0o755, wantHook: true},
		{name: "PREFIX/lib/gpuprof", gpuprof: "usr/bin/gpuprof", hook: "usr/lib/gpuprof/gpuprof-hook", hookMode: 0o755, wantHook: true},
		{name: "none", gpuprof: "usr/bin/gpuprof"},
		{name: "not executable", gpuprof: "bin/gpuprof", hook: "bin/gpuprof-hook", hookMode: 0o644},
		{name: "another prefix's", gpuprof: "usr/local/bin/gpuprof", hook: "usr/lib/gpuprof/gpuprof-hook", hookMode: 0o755},
	}
	for _, w := range wrappers {
		for _, tt := range tests {
			t.Run(w.kind+"/"+tt.name, func(t *testing.T) {
				dir := t.TempDir()
				record := filepath.Join(dir, "args")
				fake := func(rel, who string, mode os.FileMode) string {
					p := filepath.Join(dir, rel)
					if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(p, []byte("#!/bin/sh\necho \""+who+" $# $*\" >"+record+"\nexit 0\n"), mode); err != nil {
						t.Fatal(err)
					}
					return p
				}
				bin := fake(tt.gpuprof, "gpuprof", 0o755)
				if tt.hook != "" {
					fake(tt.hook, "gpuprof-hook", tt.hookMode)
				}
				if out, err := runWrapper(t, w, dir, bin, nil); err != nil || len(out) > 0 {
					t.Fatalf("%s: %v, output %q; want exit 0 and no output", w.file, err, out)
				}
				got, err := os.ReadFile(record)
				want := "gpuprof 3 " + w.kind + " --config /etc/gpuprof/gpuprof.toml\n"
				if tt.wantHook {
					want = "gpuprof-hook" + strings.TrimPrefix(want, "gpuprof")
				}
				if err != nil || string(got) != want {
					t.Errorf("ran %q (%v), want %q", got, err, want)
				}
			})
		}
	}
}

// TestHookWrappersUnwritableLog: a log the wrapper cannot write (jobcomp
// runs as the SlurmUser, the log may be root's) sends its complaints
// nowhere, and it still runs gpuprof and exits 0. A failed redirection on
// the special built-in ":" ended dash with status 2 before gpuprof ran,
// which is what jobcomp did on every site whose SlurmUser is not root.
func TestHookWrappersUnwritableLog(t *testing.T) {
	for _, w := range wrappers {
		t.Run(w.kind, func(t *testing.T) {
			dir := t.TempDir()
			// hooks.log is a directory: no user, root included, appends to it.
			if err := os.Mkdir(filepath.Join(dir, "hooks.log"), 0o755); err != nil {
				t.Fatal(err)
			}
			record := filepath.Join(dir, "args")
			fake := filepath.Join(dir, "gpuprof")
			if err := os.WriteFile(fake, []byte("#!/bin/sh\necho ran >"+record+"\nexit 1\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			out, err := runWrapper(t, w, dir, fake, nil)
			if err != nil || len(out) > 0 {
				t.Errorf("%s with an unwritable log: %v, output %q; want exit 0 and no output", w.file, err, out)
			}
			if _, err := os.Stat(record); err != nil {
				t.Errorf("%s with an unwritable log did not run gpuprof: %v", w.file, err)
			}
		})
	}
}

// wrapper is one of the contrib wrappers: its file, the gpuprof command it
// runs and the variable its job id comes in.
type wrapper struct{ file, kind, jobVar string }

var wrappers = []wrapper{
	{file: "prolog.sh", kind: "prolog", jobVar: "SLURM_JOB_ID"},
	{file: "epilog.sh", kind: "epilog", jobVar: "SLURM_JOB_ID"},
	{file: "jobcomp.sh", kind: "jobcomp", jobVar: "JOBID"},
}

// runWrapper runs contrib/slurm/<w.file> as slurmd would (exec, an
// environment with no PATH) on bin, with its log in dir/hooks.log, and
// returns everything it wrote to stdout and stderr.
func runWrapper(t *testing.T, w wrapper, dir, bin string, extraEnv []string, prefix ...string) ([]byte, error) {
	t.Helper()
	path := filepath.Join(moduleRoot(t), "contrib", "slurm", w.file)
	argv := append(append([]string{}, prefix...), path)
	// A wrapper that hangs fails the test instead of hanging it.
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.WaitDelay = time.Second
	cmd.Env = append([]string{
		w.jobVar + "=7", "SLURM_SCRIPT_CONTEXT=" + w.kind + "_slurmd",
		"GPUPROF_BIN=" + bin, "GPUPROF_HOOK_LOG=" + filepath.Join(dir, "hooks.log"),
	}, extraEnv...)
	return cmd.CombinedOutput()
}

// TestHookWrappersExitZero: whatever the binary under a wrapper does — exit
// non-zero, segfault, get SIGKILLed (the OOM killer), hang past the
// deadline even when it ignores TERM — the wrapper exits 0 within its limit,
// writes nothing to stdout/stderr (they reach slurmd and the job), and logs
// the child's status with the job id. Run also under the signal mask a
// daemon's thread may hand down (SIGCHLD and SIGALRM blocked), where a
// shell's wait builtin never returns.
func TestHookWrappersExitZero(t *testing.T) {
	const limit = 1 // seconds, GPUPROF_HOOK_LIMIT
	standIns := []struct {
		name    string
		body    string
		wantLog string // in hooks.log; "" means nothing logged
	}{
		{name: "exit 0", body: "exit 0"},
		{name: "exit 1", body: "exit 1", wantLog: "exited with status 1"},
		{name: "exit 2", body: "exit 2", wantLog: "exited with status 2"},
		{name: "exit 137", body: "exit 137", wantLog: "exited with status 137"},
		{name: "segfault", body: "kill -SEGV $$", wantLog: "exited with status 139"},
		{name: "sigkill", body: "kill -KILL $$", wantLog: "exited with status 137"},
		{name: "hang", body: "exec /bin/sleep 30", wantLog: "still running after 1s: killed"},
		{name: "hang ignoring TERM", body: "trap '' TERM INT HUP ALRM\nwhile :; do :; done", wantLog: "still running after 1s: killed"},
		{name: "chatty", body: "echo to-stdout\necho to-stderr >&2\nexit 3", wantLog: "exited with status 3"},
	}
	masks := []struct {
		name   string
		prefix []string
	}{
		{name: "plain"},
		// perl-base is essential on Debian; it blocks the signals and execs.
		{name: "SIGCHLD blocked", prefix: []string{"/usr/bin/perl", "-MPOSIX", "-e",
			"sigprocmask(SIG_BLOCK, POSIX::SigSet->new(SIGCHLD, SIGALRM, SIGTERM, SIGPIPE)) or die; exec @ARGV or die"}},
	}
	if _, err := os.Stat("/usr/bin/perl"); err != nil {
		skipOrFail(t, "no /usr/bin/perl to block signals with: %v", err)
	}
	slots := newTimedSlots()
	for _, w := range wrappers {
		for _, m := range masks {
			for _, si := range standIns {
				t.Run(w.kind+"/"+m.name+"/"+si.name, func(t *testing.T) {
					t.Parallel()
					slots.hold(t)
					dir := t.TempDir()
					bin := filepath.Join(dir, "gpuprof")
					if err := os.WriteFile(bin, []byte("#!/bin/sh\n"+si.body+"\n"), 0o755); err != nil {
						t.Fatal(err)
					}
					began := time.Now()
					out, err := runWrapper(t, w, dir, bin, []string{"GPUPROF_HOOK_LIMIT=" + strconv.Itoa(limit)}, m.prefix...)
					took := time.Since(began)
					if err != nil {
						t.Errorf("%s over a stand-in that does %q: %v, want exit 0", w.file, si.name, err)
					}
					if len(out) > 0 {
						t.Errorf("%s wrote %q to stdout/stderr, want nothing", w.file, out)
					}
					if max := limit*time.Second + 2*time.Second; took > max {
						t.Errorf("%s took %s, want at most its limit (%ds) and a margin", w.file, took.Round(time.Millisecond), limit)
					}
					logged, _ := os.ReadFile(filepath.Join(dir, "hooks.log"))
					if si.wantLog == "" {
						if strings.Contains(string(logged), "level=ERROR") {
							t.Errorf("hooks.log has an error for a clean exit:\n%s", logged)
						}
						return
					}
					for _, want := range []string{"level=ERROR", w.kind + " wrapper: job 7:", si.wantLog, "exiting 0"} {
						if !strings.Contains(string(logged), want) {
							t.Errorf("hooks.log lacks %q:\n%s", want, logged)
						}
					}
				})
			}
		}
	}
}

func TestShellScriptsParse(t *testing.T) {
	root := moduleRoot(t)
	tests := []struct {
		name  string
		shell string
		path  string
	}{
		{name: "testcluster", shell: "bash", path: "contrib/slurm/testcluster.sh"},
		{name: "ci", shell: "bash", path: ".ci/run"},
		{name: "prolog", shell: "sh", path: "contrib/slurm/prolog.sh"},
		{name: "epilog", shell: "sh", path: "contrib/slurm/epilog.sh"},
		{name: "jobcomp", shell: "sh", path: "contrib/slurm/jobcomp.sh"},
		{name: "mailprog", shell: "sh", path: "contrib/slurm/mailprog.sh"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(root, tt.path)
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode()&0o111 == 0 {
				t.Errorf("%s mode %v, want executable", tt.path, fi.Mode())
			}
			if out, err := exec.Command(tt.shell, "-n", path).CombinedOutput(); err != nil {
				t.Errorf("%s -n %s: %v\n%s", tt.shell, tt.path, err, out)
			}
		})
	}
}

// TestLogrotateConfig: contrib/logrotate/gpuprof covers every file gpuprof
// logs to by default (the example log_file, the wrappers' hooks.log, the
// hooks' last resort under spool_dir) and rotates in place (copytruncate),
// so the agent's open file keeps receiving lines. With logrotate installed
// it also really rotates a copy pointed at temporary files.
func TestLogrotateConfig(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(moduleRoot(t), "contrib", "logrotate", "gpuprof"))
	if err != nil {
		t.Fatal(err)
	}
	example, err := config.Load(filepath.Join(moduleRoot(t), "contrib", "slurm", "gpuprof.toml.example"), true)
	if err != nil {
		t.Fatal(err)
	}
	const logDirGlob = "/var/log/gpuprof/*.log"
	spoolLog := filepath.Join(config.Default().SpoolDir, "hooks.log")
	// su: not root, in directories the group's accounts may write.
	for _, want := range []string{logDirGlob, spoolLog, "copytruncate", "missingok", "su gpuprof gpuprof"} {
		if !strings.Contains(string(src), want) {
			t.Errorf("logrotate file lacks %q", want)
		}
	}
	for _, f := range []string{example.LogFile, "/var/log/gpuprof/hooks.log"} {
		if ok, _ := filepath.Match(logDirGlob, f); !ok {
			t.Errorf("%s is not rotated (%s)", f, logDirGlob)
		}
	}

	logrotate, err := exec.LookPath("logrotate")
	if err != nil {
		logrotate = "/usr/sbin/logrotate"
		if _, err := os.Stat(logrotate); err != nil {
			skipOrFail(t, "logrotate not installed: checked the file's text only")
		}
	}
	dir := t.TempDir()
	logDir := filepath.Join(dir, "log")
	spoolDir := filepath.Join(dir, "spool")
	for _, d := range []string{logDir, spoolDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	// As the test's own user: the gpuprof account need not exist here.
	conf := strings.NewReplacer("/var/log/gpuprof", logDir, config.Default().SpoolDir, spoolDir,
		"su gpuprof gpuprof", "su root root").Replace(string(src))
	confPath := filepath.Join(dir, "gpuprof.logrotate")
	writeFile(t, confPath, conf)
	// The agent's file stays open across the rotation.
	agentLog, err := os.OpenFile(filepath.Join(logDir, "gpuprof.log"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o640)
	if err != nil {
		t.Fatal(err)
	}
	defer agentLog.Close()
	if _, err := agentLog.WriteString("before rotation\n"); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(spoolDir, "hooks.log"), "hook line\n")
	if out, err := exec.Command(logrotate, "-f", "-s", filepath.Join(dir, "state"), confPath).CombinedOutput(); err != nil {
		t.Fatalf("logrotate -f: %v\n%s", err, out)
	}
	if _, err := agentLog.WriteString("after rotation\n"); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		filepath.Join(logDir, "gpuprof.log"):   "after rotation\n",
		filepath.Join(logDir, "gpuprof.log.1"): "before rotation\n",
		filepath.Join(spoolDir, "hooks.log.1"): "hook line\n",
		filepath.Join(spoolDir, "hooks.log"):   "",
	} {
		got, err := os.ReadFile(path)
		if err != nil || string(got) != want {
			t.Errorf("%s after rotation: %q (%v), want %q", filepath.Base(path), got, err, want)
		}
	}
}
