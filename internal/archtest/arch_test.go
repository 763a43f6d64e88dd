// Package archtest enforces the project's layering: which packages may
// import what. It has no code, only this test.
package archtest

import (
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/gpuprof/gpuprof"

type pkg struct {
	ImportPath string
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
	{"hooks", []string{module + "/agent"}, "the hooks are the agent's client (and may have to start it): they speak hookproto, never import the daemon"},
	{"jobcomp", []string{"github.com/NVIDIA/go-nvml", module + "/agent", module + "/hooks", module + "/gpu/nvml", module + "/gpu/sim"}, "jobcomp runs in slurmctld: it samples no GPU and talks to no node agent, it writes the database or spools a hookproto record"},
	{"hookproto", []string{"github.com/mattn/go-sqlite3", "database/sql", "net/http", module + "/agent", module + "/hooks", module + "/jobcomp", module + "/store", module + "/ingest", module + "/spool", module + "/gpu/nvml", module + "/gpu/sim"}, "the hook protocol is shared by client and daemon: it imports neither, and no database or GPU backend"},
	{"config", []string{"github.com/NVIDIA/go-nvml", "github.com/mattn/go-sqlite3", "github.com/spf13/cobra"}, "config only describes"},
	{"analysis", []string{"github.com/NVIDIA/go-nvml", "github.com/mattn/go-sqlite3", "github.com/spf13/cobra", "database/sql", module + "/store", module + "/gpu/nvml", module + "/gpu/sim"}, "analysis is pure"},
	{"queuesim", []string{"github.com/NVIDIA/go-nvml", "github.com/mattn/go-sqlite3", "github.com/spf13/cobra", "database/sql", "os", "time/tzdata", module + "/store", module + "/analysis", module + "/slurmext", module + "/gpu"}, "the queue simulator is pure: jobs and a cluster in, starts out"},
	{"report", []string{"github.com/mattn/go-sqlite3", "database/sql", "net", "net/http", module + "/store", module + "/collect", module + "/agent"}, "the report presents findings: it reads no database and no network"},
	{"tui", []string{"github.com/mattn/go-sqlite3", "database/sql", "net/http", module + "/collect", module + "/agent"}, "the TUI reads jobs through its Source, which enforces access"},
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
		for _, imp := range p.Imports {
			if strings.HasPrefix(imp, "github.com/NVIDIA/go-nvml") && rel != "gpu/nvml" {
				t.Errorf("%s imports %s: only gpu/nvml may import go-nvml", p.ImportPath, imp)
			}
			if strings.HasPrefix(imp, "github.com/spf13/cobra") && !strings.HasPrefix(rel, "cmd/") {
				t.Errorf("%s imports cobra: only cmd/ may", p.ImportPath)
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
