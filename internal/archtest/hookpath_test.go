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
}

// TestHookPathIsSmall: the hooks package and everything it imports stay
// free of the heavy packages above, so that the hook path can be linked as
// a small program that starts as fast as one (issue #41: prolog and epilog
// p99 ≤ 3× /bin/true). The gpuprof binary links them for its other
// commands; a hook-only entry point needs the hook path to stay small.
func TestHookPathIsSmall(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", module+"/hooks").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 8 {
		t.Fatalf("go list saw %d dependencies of hooks; the rule would check nothing", len(deps))
	}
	for _, d := range deps {
		for _, h := range heavyForHooks {
			if d == h || strings.HasPrefix(d, h+"/") {
				t.Errorf("the hook path links %s (under %s): a hook would pay for its start-up; keep it out of hooks and what hooks imports", d, h)
			}
		}
	}
}
