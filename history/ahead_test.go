package history

import (
	"errors"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/gpuprof/gpuprof/slurmext/sacct"
)

type readStep struct {
	rec      any
	err      string
	problems []string
}

// readSteps reads next until an error that ends the reading, as Import does.
func readSteps(next func() (any, error), problems func() []string) []readStep {
	var steps []readStep
	for {
		rec, err := next()
		s := readStep{rec: rec}
		if err != nil {
			s.err = err.Error()
		} else {
			s.problems = append([]string(nil), problems()...)
		}
		steps = append(steps, s)
		var le *sacct.LineError
		if err != nil && !errors.As(err, &le) {
			return steps
		}
	}
}

// TestReadAheadSameAsReader: reading ahead gives the same records, line
// errors, notes and end as the reader itself, in the same order, on real
// sacct text with malformed lines among its jobs.
func TestReadAheadSameAsReader(t *testing.T) {
	b, err := os.ReadFile("../slurmext/testdata/real/22.05-own-P-epoch-steps.txt")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	// A line with too few columns and a job with a malformed time limit
	// after the first few jobs: line errors and notes, then more jobs.
	noted := strings.Split(lines[1], "|")
	noted[0], noted[1], noted[13] = "900", "900", "forever" // a Timelimit that is no duration: noted
	bad := []string{"1|2|3", strings.Join(noted, "|")}
	text := strings.Join(append(append(lines[:4:4], bad...), lines[4:]...), "\n") + "\n"
	for _, n := range []int{1, 3, 40, 120} {
		// n copies: more records than the read-ahead's channel holds.
		in := strings.Repeat(text, n)
		sr := sacct.NewReader(strings.NewReader(in), nil, sacct.Options{})
		want := readSteps(func() (any, error) { return sr.Next() }, sr.Problems)
		a := readAhead(sacct.NewReader(strings.NewReader(in), nil, sacct.Options{}))
		got := readSteps(func() (any, error) { return a.Next() }, a.Problems)
		a.Close()
		if len(want) < 3 || want[len(want)-1].err != io.EOF.Error() {
			t.Fatalf("the plain reader read %d steps, the last %+v: the test reads nothing", len(want), want[len(want)-1])
		}
		lineErrs, withNotes := 0, 0
		for _, s := range want {
			if s.err != "" && s.err != io.EOF.Error() {
				lineErrs++
			}
			if len(s.problems) > 0 {
				withNotes++
			}
		}
		if lineErrs < n || withNotes < n {
			t.Fatalf("%d copies: %d line errors, %d records with notes; the test plants at least %d of each", n, lineErrs, withNotes, n)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%d copies: read ahead %d steps, the reader %d; they differ", n, len(got), len(want))
		}
	}
}

// TestReadAheadClose: closing before the end stops the goroutine, which
// may be waiting to hand over a record.
func TestReadAheadClose(t *testing.T) {
	b, err := os.ReadFile("../slurmext/testdata/real/22.05-own-P-epoch-steps.txt")
	if err != nil {
		t.Fatal(err)
	}
	a := readAhead(sacct.NewReader(strings.NewReader(strings.Repeat(string(b), 200)), nil, sacct.Options{}))
	if _, err := a.Next(); err != nil {
		t.Fatal(err)
	}
	a.Close()
	for range a.batches {
	}
}
