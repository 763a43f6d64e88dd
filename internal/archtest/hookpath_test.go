package archtest

import (
	"os/exec"
	"strings"
	"testing"
)

// heavyForHooks are packages whose initialisers or size a slurmd hook must
// not pay for: plotting, the TUI, Prometheus, the man-page generator, HTML
// templates, HTTP, and gpuprof's own analyses and front ends. Each of them
// initialises eagerly (gonum/plot parses its fonts, blackfriday builds its
// entity table, prometheus registers its collectors), which Go runs before
// main in every binary that links them.
var heavyForHooks = []string{
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

// TestHookPathIsSmall: gpuprof-hook, the hook-only binary, and the hooks
// package with everything they import stay free of the heavy packages
// above, so that a hook starts as fast as a small program (issue #41:
// prolog and epilog p99 ≤ 3× /bin/true). The gpuprof binary links them for
// its other commands; contrib/slurm/hook.sh runs gpuprof-hook instead.
func TestHookPathIsSmall(t *testing.T) {
	for _, pkg := range []string{module + "/hooks", module + "/cmd/gpuprof-hook"} {
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
