// Command funclen lists the module's functions (test files left out) that
// are longer than a number of lines, longest first, and counts them: the
// "functions over 100 lines" figure of docs/benchmarks.md's house metrics.
//
//	go run ./tools/funclen [-over 100] [DIR]
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	over := flag.Int("over", 100, "list functions longer than this many lines")
	flag.Parse()
	root := "."
	if flag.NArg() > 0 {
		root = flag.Arg(0)
	}
	type f struct {
		name string
		n    int
	}
	var out []f
	fset := token.NewFileSet()
	err := filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if info.IsDir() && (info.Name() == ".git" || info.Name() == "build" || info.Name() == "dist" || info.Name() == "testdata") {
			return filepath.SkipDir
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		file, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			return nil
		}
		for _, d := range file.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1
			rel, _ := filepath.Rel(root, p)
			out = append(out, f{rel + ":" + fd.Name.Name, n})
		}
		return nil
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "funclen:", err)
		os.Exit(1)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].n > out[j].n })
	c := 0
	for _, x := range out {
		if x.n > *over {
			c++
			fmt.Printf("%5d %s\n", x.n, x.name)
		}
	}
	fmt.Printf("functions over %d lines: %d\n", *over, c)
}
