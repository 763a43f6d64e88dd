// Command mkbenchdb writes benchdb's million-job database to a file, for
// benchmarks that run the gpuprof binary over it (scripts/bench-report.sh).
//
//	mkbenchdb -out FILE [-start 2026-10-01] [-every 2.6s]
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"os"
	"time"

	_ "github.com/mattn/go-sqlite3"

	"github.com/gpuprof/gpuprof/store"
	"github.com/gpuprof/gpuprof/tools/benchdb"
)

func main() {
	out := flag.String("out", "", "database file to create (must not exist)")
	start := flag.String("start", "2026-10-01", "first job's start, YYYY-MM-DD UTC")
	every := flag.Duration("every", 2600*time.Millisecond, "time between job starts (2.6s: a million jobs in 30 days)")
	flag.Parse()
	if err := run(*out, *start, *every); err != nil {
		fmt.Fprintln(os.Stderr, "mkbenchdb:", err)
		os.Exit(1)
	}
}

func run(out, start string, every time.Duration) error {
	if out == "" {
		return fmt.Errorf("-out is required")
	}
	if _, err := os.Stat(out); err == nil {
		return fmt.Errorf("%s exists", out)
	}
	base, err := time.Parse("2006-01-02", start)
	if err != nil {
		return fmt.Errorf("-start: %w", err)
	}
	ctx := context.Background()
	db, err := store.Open(ctx, out, store.Options{}) // creates the schema
	if err != nil {
		return err
	}
	if err := db.Close(); err != nil {
		return err
	}
	raw, err := sql.Open("sqlite3", "file:"+out+"?_busy_timeout=5000")
	if err != nil {
		return err
	}
	defer raw.Close()
	raw.SetMaxOpenConns(1)
	return benchdb.FillEvery(ctx, raw, base, every)
}
