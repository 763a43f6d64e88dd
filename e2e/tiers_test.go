package e2e

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestSmokeTierNamesTests: every name in the Makefile's E2E_SMOKE (the
// smoke tier, chosen with go test -run) is a test of this package, so a
// renamed or removed test cannot drop out of the tier unnoticed.
func TestSmokeTierNamesTests(t *testing.T) {
	root := moduleRoot(t)
	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^E2E_SMOKE = \^\(([A-Za-z0-9_|]+)\)\$\$$`).FindSubmatch(mk)
	if m == nil {
		t.Fatal("Makefile: no line E2E_SMOKE = ^(TestA|TestB|…)$$")
	}
	tests := map[string]bool{}
	for _, fn := range testFuncs(t) {
		tests[fn.Name.Name] = true
	}
	names := strings.Split(string(m[1]), "|")
	for _, name := range names {
		if !tests[name] {
			t.Errorf("E2E_SMOKE names %s, which is no test of package e2e", name)
		}
	}
	if len(names) < 5 {
		t.Errorf("E2E_SMOKE names %d tests: %v", len(names), names)
	}
}

// TestWholeNodeTestsListed: wholeNodeOrder, the order in which waiting
// whole-node tests get the node, names exactly the tests that call
// wholeNode (a test left out would go last, a renamed one silently).
func TestWholeNodeTestsListed(t *testing.T) {
	calling := map[string]bool{}
	for _, fn := range testFuncs(t) {
		if fn.Body == nil {
			continue
		}
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			if c, ok := n.(*ast.CallExpr); ok {
				if id, ok := c.Fun.(*ast.Ident); ok && id.Name == "wholeNode" {
					calling[fn.Name.Name] = true
				}
			}
			return true
		})
	}
	listed := map[string]bool{}
	for _, name := range wholeNodeOrder {
		listed[name] = true
		if !calling[name] {
			t.Errorf("wholeNodeOrder names %s, which does not call wholeNode", name)
		}
	}
	for name := range calling {
		if !listed[name] {
			t.Errorf("%s calls wholeNode but is not in wholeNodeOrder", name)
		}
	}
}

// testFuncs returns the package's top-level Test functions, parsed from
// its _test.go files.
func testFuncs(t *testing.T) []*ast.FuncDecl {
	t.Helper()
	pkgs, err := parser.ParseDir(token.NewFileSet(), ".", func(fi os.FileInfo) bool { return strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	if err != nil {
		t.Fatal(err)
	}
	var fns []*ast.FuncDecl
	for _, p := range pkgs {
		for _, f := range p.Files {
			for _, d := range f.Decls {
				if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Test") {
					fns = append(fns, fn)
				}
			}
		}
	}
	return fns
}
