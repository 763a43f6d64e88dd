package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
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
// (analysis.ExamineView), never analyse its parts themselves.
var sheetDrawers = map[string]bool{"cliview": true, "tui": true}

// TestOneFactSheet (issue #41): a job's facts are worked out once.
// Outside the packages that record XIDs, no code walks a GPU's XID list
// (analysis.XIDsOf lists them for show, show --json, the TUI's detail and
// the notice mail: three ways of listing them had drifted apart); and
// show and the TUI's detail (cliview, tui) do not call analysis.Examine:
// they draw the sheet analysis.ExamineView builds, so that the two
// cannot say different things of one job. The fixture jobs their goldens
// share (internal/jobfixture) are imported by tests only.
func TestOneFactSheet(t *testing.T) {
	checked := 0
	for _, p := range listPackages(t) {
		rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		if strings.HasPrefix(rel, "internal/archtest") {
			continue
		}
		if slices.Contains(p.Imports, module+"/internal/jobfixture") {
			t.Errorf("%s imports internal/jobfixture: the fixture jobs are for tests", rel)
		}
		for _, name := range p.GoFiles {
			file := filepath.Join(p.Dir, name)
			f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			checked++
			where := rel + "/" + name
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.RangeStmt:
					if sel, ok := n.X.(*ast.SelectorExpr); ok && sel.Sel.Name == "XIDs" && !xidRecorders[rel] {
						t.Errorf("%s walks a GPU's XIDs itself: list them by analysis.XIDsOf, the one rule every page follows", where)
					}
				case *ast.SelectorExpr:
					if x, ok := n.X.(*ast.Ident); ok && x.Name == "analysis" && n.Sel.Name == "Examine" && sheetDrawers[rel] {
						t.Errorf("%s calls analysis.Examine: draw the job's fact sheet (analysis.ExamineView)", where)
					}
				}
				return true
			})
		}
	}
	if checked < 50 {
		t.Fatalf("checked %d files; the rule would check nothing", checked)
	}
}
