// Command mksacct writes mksacct's sacct -P text (epoch times) in gpuprof's
// own field order (sacct.Fields), for scripts/bench-import.sh: by
// default what gpuprof's own sacct command prints (a header line, each job
// followed by its steps), with -allocs what sacct -X --noheader prints.
//
//	mksacct -out FILE [-jobs 1000000] [-seed 1] [-start 2026-10-01] [-allocs]
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/gpuprof/gpuprof/slurmext/sacct"
	"github.com/gpuprof/gpuprof/tools/mksacct"
)

func main() {
	out := flag.String("out", "", "file to write (- for stdout)")
	jobs := flag.Int("jobs", 1_000_000, "number of records (lines)")
	seed := flag.Uint64("seed", 1, "random seed")
	start := flag.String("start", "2026-10-01", "first submission, YYYY-MM-DD UTC")
	allocs := flag.Bool("allocs", false, "allocation lines only, no header (sacct -X --noheader)")
	flag.Parse()
	if err := run(*out, *jobs, *seed, *start, *allocs); err != nil {
		fmt.Fprintln(os.Stderr, "mksacct:", err)
		os.Exit(1)
	}
}

func run(out string, jobs int, seed uint64, start string, allocs bool) error {
	if out == "" {
		return fmt.Errorf("-out is required")
	}
	base, err := time.Parse("2006-01-02", start)
	if err != nil {
		return fmt.Errorf("-start: %w", err)
	}
	f := os.Stdout
	if out != "-" {
		if f, err = os.Create(out); err != nil {
			return err
		}
		defer f.Close()
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	if err := mksacct.Write(bw, mksacct.Options{Jobs: jobs, Seed: seed, Base: base, Fields: sacct.Fields(), Header: !allocs, Steps: !allocs}); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return f.Close()
}
