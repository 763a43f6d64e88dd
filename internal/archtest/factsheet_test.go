package archtest

import (
	"go/ast"
	"path"
	"slices"
	"strings"
	"testing"
)

// xidRecorders keep a GPU's XID events (record, store, load them): they
// may walk the list; every page lists them by analysis.XIDsOf.
var xidRecorders = map[string]bool{
	"analysis": true, "profile": true, "store": true, "agent": true, "internal/jobfixture": true,
}

// sheetDrawers render one job to a person: they draw its fact sheet
// (analysis.ExamineView), never analyse its parts themselves: show
// (cliview), the TUI's detail (tui) and the job-end mail (jobend).
var sheetDrawers = map[string]bool{"cliview": true, "tui": true, "jobend": true}

// xidListers may list a GPU's XIDs by analysis.XIDsOf: analysis, which
// builds the sheet with it, and cliview, whose show --json lists a GPU's
// codes beside its recorded events. The notice mail takes the sheet's
// list (analysis.SheetGPU).
var xidListers = map[string]bool{"analysis": true, "cliview": true}

// mailWords are the packages that word a mail about a job (the idle
// notices, the job-end summary): they take a GPU's figures from its
// fact sheet, never work them out of a profile (its utilisation's mean,
// percentiles, idle share, memory floor) themselves. ruleFiles decide
// from the running profile: the notice rules (notice/rules.go), which
// words nothing.
var (
	mailWords  = map[string]bool{"notice": true, "jobend": true}
	ruleFiles  = map[string]bool{"notice/rules.go": true}
	gpuFigures = map[string]bool{"UtilMean": true, "UtilPercentile": true, "IdleFraction": true, "MemFloor": true}
)

// TestOneFactSheet (issue #41): a job's facts are worked out once.
// Outside the packages that record XIDs, no code walks a GPU's XID list
// (analysis.XIDsOf lists them for the sheet and show --json; the TUI's
// detail and the notice mail take the sheet's list: three ways of listing
// them had drifted apart); show, the TUI's detail and the job-end mail
// (cliview, tui, jobend) do not call analysis.Examine: they draw the
// sheet analysis.ExamineView builds, so that they cannot say different
// things of one job; and the mails (notice, jobend) work no GPU figure
// out of a profile themselves (the notice rules aside, which decide and
// word nothing): the evidence takes them from the sheet. The fixture
// jobs their goldens share (internal/jobfixture) are imported by tests
// only.
func TestOneFactSheet(t *testing.T) {
	files := goFilesOf(t, func(rel string, p pkg) bool {
		if strings.HasPrefix(rel, "internal/archtest") {
			return false
		}
		if slices.Contains(p.Imports, module+"/internal/jobfixture") {
			t.Errorf("%s imports internal/jobfixture: the fixture jobs are for tests", rel)
		}
		return true
	})
	for _, gf := range files {
		where, rel := gf.where, path.Dir(gf.where)
		ast.Inspect(gf.file, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.RangeStmt:
				if sel, ok := n.X.(*ast.SelectorExpr); ok && sel.Sel.Name == "XIDs" && !xidRecorders[rel] {
					t.Errorf("%s walks a GPU's XIDs itself: list them by analysis.XIDsOf, the one rule every page follows", where)
				}
			case *ast.SelectorExpr:
				if x, ok := n.X.(*ast.Ident); ok && x.Name == "analysis" && n.Sel.Name == "Examine" && sheetDrawers[rel] {
					t.Errorf("%s calls analysis.Examine: draw the job's fact sheet (analysis.ExamineView)", where)
				}
				if x, ok := n.X.(*ast.Ident); ok && x.Name == "analysis" && n.Sel.Name == "XIDsOf" && !xidListers[rel] {
					t.Errorf("%s lists XIDs by analysis.XIDsOf itself: take the fact sheet's list (GPUSheet.XIDs)", where)
				}
			case *ast.CallExpr:
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok && gpuFigures[sel.Sel.Name] && mailWords[rel] && !ruleFiles[where] {
					t.Errorf("%s works a GPU's %s out of its profile: a mail takes its figures from the job's fact sheet (analysis.ExamineView, SheetGPU)", where, sel.Sel.Name)
				}
			}
			return true
		})
	}
	if len(files) < 50 {
		t.Fatalf("checked %d files; the rule would check nothing", len(files))
	}
}
