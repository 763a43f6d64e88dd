package archtest

import (
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// heavyForHooks are packages whose initialisers or size a slurmd hook must
// not pay for: plotting, the TUI, Prometheus, the man-page generator, HTML
// templates, HTTP, and gpuprof's own analyses and front ends. Each of them
// initialises eagerly (gonum/plot parses its fonts, blackfriday builds its
// entity table, prometheus registers its collectors), which Go runs before
// main in every binary that links them. regexp too: it links unicode's
// category and script tables, which Go builds at start (11 KB in 16
// allocations, and regexp/syntax's own 2 KB); the hooks' few names are
// checked by hand (commentqueue).
var heavyForHooks = []string{
	"regexp",
	"gonum.org/v1/plot",
	"codeberg.org/go-latex",
	"github.com/prometheus",
	"github.com/charmbracelet",
	"charm.land",
	"github.com/spf13/cobra",
	"github.com/cpuguy83/go-md2man",
	"github.com/russross/blackfriday",
	"html/template",
	"net/http",
	module + "/analysis",
	module + "/capacity",
	module + "/queuesim",
	module + "/monthly",
	module + "/report",
	module + "/tui",
	module + "/cliview",
	module + "/notice",
	module + "/collect",
	module + "/agent",
	module + "/store",
}

// TestHookPathIsSmall: gpuprof-hook, gpuprof-hook-full and the hooks
// package with everything they import stay free of the heavy packages
// above, so that a hook starts as fast as a small program (issue #41:
// prolog and epilog p99 ≤ 3× /bin/true). The gpuprof binary links them for
// its other commands; contrib/slurm/hook.sh runs gpuprof-hook instead.
func TestHookPathIsSmall(t *testing.T) {
	for _, pkg := range []string{module + "/hooks", module + "/cmd/gpuprof-hook", module + "/cmd/gpuprof-hook-full"} {
		out, err := exec.Command("go", "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		deps := strings.Fields(string(out))
		if len(deps) < 8 {
			t.Fatalf("go list saw %d dependencies of %s; the rule would check nothing", len(deps), pkg)
		}
		for _, d := range deps {
			for _, h := range heavyForHooks {
				if d == h || strings.HasPrefix(d, h+"/") {
					t.Errorf("%s links %s (under %s): a hook would pay for its start-up; keep it out of the hook path", pkg, d, h)
				}
			}
		}
	}
}

// TestHookBinaryWithoutCgo: gpuprof-hook and gpuprof-hook-full build
// without cgo (the Makefile builds them with CGO_ENABLED=0), static
// binaries that start without the dynamic loader, whose start alone cost 3.7× /bin/true (issue #41,
// docs/benchmarks.md). No package of its build may need cgo: with
// CGO_ENABLED=0 every dependency must still have Go files to build (a
// cgo-only package such as go-nvml's has none then), and none outside the
// standard library (whose net and runtime/cgo build without cgo too) may
// have cgo files at all. The hooks name GPUs from the driver's /proc files
// (gpu/nvproc); NVML and SQLite stay in the gpuprof binary.
func TestHookBinaryWithoutCgo(t *testing.T) {
	for _, bin := range []string{module + "/cmd/gpuprof-hook", module + "/cmd/gpuprof-hook-full"} {
		hookBinaryWithoutCgo(t, bin)
	}
}

func hookBinaryWithoutCgo(t *testing.T, bin string) {
	for _, cgo := range []string{"0", "1"} {
		cmd := exec.Command("go", "list", "-e", "-deps", "-f", "{{.ImportPath}}\t{{.Standard}}\t{{len .CgoFiles}}\t{{if .Error}}{{.Error}}{{end}}", bin)
		cmd.Env = append(cmd.Environ(), "CGO_ENABLED="+cgo)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("CGO_ENABLED=%s go list -deps %s: %v", cgo, bin, err)
		}
		lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
		if len(lines) < 8 {
			t.Fatalf("go list saw %d dependencies of %s; the rule would check nothing", len(lines), bin)
		}
		for _, l := range lines {
			f := strings.SplitN(l, "\t", 4)
			if len(f) != 4 {
				t.Fatalf("go list line %q", l)
			}
			switch {
			case f[3] != "":
				t.Errorf("CGO_ENABLED=%s: %s does not build: %s (a package that needs cgo?); keep it out of %s", cgo, f[0], f[3], bin)
			case f[1] == "false" && f[2] != "0":
				t.Errorf("CGO_ENABLED=%s: %s has %s cgo files; %s must build without cgo (it names GPUs through gpu/nvproc, not NVML)", cgo, f[0], f[2], bin)
			}
		}
	}
}

// TestHookInitAllocatesNothing: no package of this module that
// gpuprof-hook links builds anything before main. Go runs every linked
// package's initialiser in every process, a hook's too, and a hook lives
// a few milliseconds: a table is built where it is used (a literal, a
// switch, a function), never at start. Built without cgo as the Makefile
// builds it, gpuprof-hook runs with GODEBUG=inittrace=1, which reports
// each initialiser's heap allocations; the module's must be none (issue
// #41; profile's activity tables, slurmext's and config's maps and
// commentqueue's compiled-on-first-use expressions were).
func TestHookInitAllocatesNothing(t *testing.T) {
	for _, name := range []string{"gpuprof-hook", "gpuprof-hook-full"} {
		t.Run(name, func(t *testing.T) { hookInitAllocatesNothing(t, name) })
	}
}

func hookInitAllocatesNothing(t *testing.T, name string) {
	bin := filepath.Join(t.TempDir(), name)
	build := exec.Command("go", "build", "-o", bin, module+"/cmd/"+name)
	build.Env = append(build.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", name, err, out)
	}
	run := exec.Command(bin, "--help")
	run.Env = []string{"GODEBUG=inittrace=1"}
	var stderr strings.Builder
	run.Stderr = &stderr
	if err := run.Run(); err != nil {
		t.Fatalf("%s --help: %v\n%s", name, err, stderr.String())
	}
	// init PKG @T ms, C ms clock, B bytes, A allocs
	seen := 0
	for _, l := range strings.Split(stderr.String(), "\n") {
		f := strings.Fields(l)
		if len(f) != 11 || f[0] != "init" {
			continue
		}
		seen++
		if (f[1] == module || strings.HasPrefix(f[1], module+"/")) && (f[7] != "0" || f[9] != "0") {
			t.Errorf("%s allocates %s bytes in %s allocations before main; build it where it is used (a hook pays for it)", f[1], f[7], f[9])
		}
	}
	if seen < 8 {
		t.Fatalf("inittrace reported %d initialisers; the rule would check nothing:\n%s", seen, stderr.String())
	}
}

// thinHookMay is all gpuprof-hook may link beyond the standard library:
// it forwards a prolog or epilog to the agent (hookproto/fwd) with its
// configuration file's sum (internal/conffile) and hands the rest to
// gpuprof-hook-full, else gpuprof (cmd/internal/hookbin). The hook's work — the configuration's
// meaning, the environment, gres.conf, the spool — is hooks', in the
// agent (hooks.Forwarder) or in gpuprof.
var thinHookMay = []string{
	module + "/cmd/gpuprof-hook",
	module + "/cmd/internal/hookbin",
	module + "/hookproto/fwd",
	module + "/internal/conffile",
	"golang.org/x/sys/unix",
}

// thinHookMustNot are standard packages gpuprof-hook must not link: each
// costs a prolog page faults at start or in use (the net poller and its
// resolver's tables, reflection-driven encoding, the crypto self-tests,
// log/slog's handlers; docs/benchmarks.md, issue #41).
var thinHookMustNot = []string{"net", "encoding/json", "log/slog", "log/syslog", "crypto", "os/exec", "os/signal", "regexp", "text/template"}

// TestThinHookIsSmall: gpuprof-hook, the binary slurmd runs for every
// job's prolog and epilog, links what thinHookMay lists and the standard
// library without thinHookMustNot.
func TestThinHookIsSmall(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}\t{{.Standard}}", module+"/cmd/gpuprof-hook").Output()
	if err != nil {
		t.Fatalf("go list -deps gpuprof-hook: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 8 {
		t.Fatalf("go list saw %d dependencies; the rule would check nothing", len(lines))
	}
	for _, l := range lines {
		pkg, std, _ := strings.Cut(l, "\t")
		if std == "true" {
			for _, m := range thinHookMustNot {
				if pkg == m || strings.HasPrefix(pkg, m+"/") {
					t.Errorf("gpuprof-hook links %s: a prolog would pay for it; the agent or gpuprof-hook-full does that work", pkg)
				}
			}
			continue
		}
		if !slices.Contains(thinHookMay, pkg) {
			t.Errorf("gpuprof-hook links %s: only %v may be (the hook's work is the agent's or gpuprof-hook-full's)", pkg, thinHookMay)
		}
	}
}
