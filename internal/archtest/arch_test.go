// Package archtest enforces the project's layering: which packages may
// import what. It has no code, only this test.
package archtest

import (
	"encoding/json"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/gpuprof/gpuprof"

type pkg struct {
	ImportPath string
	Name       string
	Imports    []string
}

// rules: a package (its path below the module, or one below it) may not
// import any of the listed packages or their sub-packages.
var rules = []struct {
	pkg       string
	forbidden []string
	why       string
}{
	{"gpu", []string{"github.com/NVIDIA/go-nvml", "github.com/mattn/go-sqlite3", "github.com/spf13/cobra", module + "/store", module + "/agent"}, "GPU access is a leaf"},
	{"profile", []string{"github.com/NVIDIA/go-nvml", "github.com/mattn/go-sqlite3", "github.com/spf13/cobra", module + "/store", module + "/agent", module + "/gpu/nvml", module + "/gpu/sim"}, "the profile model is pure"},
	{"slurmext", []string{"github.com/NVIDIA/go-nvml", "github.com/mattn/go-sqlite3", "github.com/spf13/cobra", module + "/store", module + "/agent", module + "/gpu"}, "Slurm parsing is pure"},
	{"store", []string{"github.com/NVIDIA/go-nvml", "github.com/spf13/cobra", module + "/agent", module + "/hooks", module + "/gpu/nvml", module + "/gpu/sim"}, "the store knows profiles, not GPUs or hooks"},
	{"agent", []string{"github.com/NVIDIA/go-nvml", "github.com/spf13/cobra", module + "/gpu/nvml", module + "/gpu/sim"}, "the agent reads GPUs through gpu.Sampler only (slurmext, pure, is the one home of the job-id rule it applies)"},
	{"hooks", []string{"github.com/NVIDIA/go-nvml", "github.com/spf13/cobra", module + "/gpu/nvml", module + "/gpu/sim"}, "hooks get their sampler injected"},
	{"config", []string{"github.com/NVIDIA/go-nvml", "github.com/mattn/go-sqlite3", "github.com/spf13/cobra"}, "config only describes"},
	{"analysis", []string{"github.com/NVIDIA/go-nvml", "github.com/mattn/go-sqlite3", "github.com/spf13/cobra", "database/sql", module + "/store", module + "/gpu/nvml", module + "/gpu/sim"}, "analysis is pure"},
	{"analysis", []string{module + "/capacity", module + "/queuesim"}, "analysis concludes from the jobs; the replay and the plan built on it are capacity's, which imports analysis, never the reverse"},
	{"capacity", []string{"github.com/NVIDIA/go-nvml", "github.com/mattn/go-sqlite3", "github.com/spf13/cobra", "database/sql", module + "/store", module + "/gpu/nvml", module + "/gpu/sim"}, "the capacity plan is pure"},
	{"queuesim", []string{"github.com/NVIDIA/go-nvml", "github.com/mattn/go-sqlite3", "github.com/spf13/cobra", "database/sql", "os", "time/tzdata", module + "/store", module + "/analysis", module + "/slurmext", module + "/gpu"}, "the queue simulator is pure: jobs and a cluster in, starts out"},
	{"report", []string{"github.com/mattn/go-sqlite3", "database/sql", "net", "net/http", module + "/store", module + "/collect", module + "/agent"}, "the report presents findings: it reads no database and no network"},
	{"tui", []string{"github.com/mattn/go-sqlite3", "database/sql", "net/http", module + "/collect", module + "/agent"}, "the TUI reads jobs through its Source, which enforces access"},
}

// queuesimUsers may import queuesim: capacity, the one product user of the
// replay, and tools/planmonth, test support that schedules its
// generated month once with queuesim so that the jobs carry the starts a
// cluster would have given them (it reads no answer of the replay).
var queuesimUsers = map[string]bool{"capacity": true, "tools/planmonth": true}

// leaves: a package (its path below the module) may import no package of
// the module but the listed ones.
var leaves = []struct {
	pkg     string
	allowed []string
	why     string
}{
	{"slurmext", []string{module + "/termtext"}, "slurmext is the one home of every Slurm rule (job ids, states and their outcome classes, cgroup layout, step sockets, gres.conf), asked by analysis, the TUI, the report, the agent, hooks and the store: it imports nothing of gpuprof but termtext (the one rule for untrusted text), so every package can ask it and it can borrow no rule from one"},
	{"internal/present", []string{module + "/gpu", module + "/slurmext"}, "present is the one presenter: every number a person reads (durations, instants, bytes, percentages, energy, GPU-hours, plurals and lists) and the job facts show and the TUI both render are written by it for the CLI, the TUI, the report, notice mails and analysis prose alike; values in, text out, so it imports only the XID table it names codes from and Slurm's forms of durations and instants, and every front end (and analysis) can import it without a cycle"},
}

func TestLayers(t *testing.T) {
	out, err := exec.Command("go", "list", "-json", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	seen := 0
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		seen++
		rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		if strings.HasPrefix(rel, "internal/") && p.Name == "main" {
			t.Errorf("%s is a program: internal/ holds small libraries only; programs go in tools/", p.ImportPath)
		}
		for _, imp := range p.Imports {
			if strings.HasPrefix(imp, "github.com/NVIDIA/go-nvml") && rel != "gpu/nvml" {
				t.Errorf("%s imports %s: only gpu/nvml may import go-nvml", p.ImportPath, imp)
			}
			if strings.HasPrefix(imp, "github.com/spf13/cobra") && !strings.HasPrefix(rel, "cmd/") {
				t.Errorf("%s imports cobra: only cmd/ may", p.ImportPath)
			}
			if strings.HasPrefix(imp, module+"/tools/") && !strings.HasPrefix(rel, "tools/") {
				t.Errorf("%s imports %s: tools/ holds benchmark and generator programs; the product does not depend on them (tests may)", p.ImportPath, imp)
			}
			if imp == module+"/queuesim" && !queuesimUsers[rel] {
				t.Errorf("%s imports queuesim: only capacity may (the what-ifs and the plan are the one user of the replay; others ask capacity)", p.ImportPath)
			}
			for _, l := range leaves {
				if rel == l.pkg && strings.HasPrefix(imp, module+"/") && !slices.Contains(l.allowed, imp) {
					t.Errorf("%s imports %s: %s", p.ImportPath, imp, l.why)
				}
			}
			for _, r := range rules {
				if rel != r.pkg && (r.pkg == "gpu" || !strings.HasPrefix(rel, r.pkg+"/")) {
					continue // "gpu" covers the interface package only, not its backends
				}
				for _, f := range r.forbidden {
					if imp == f || strings.HasPrefix(imp, f+"/") {
						t.Errorf("%s imports %s: %s", p.ImportPath, imp, r.why)
					}
				}
			}
		}
	}
	if seen < 8 {
		t.Fatalf("go list saw %d packages; the rules would check nothing", seen)
	}
}
