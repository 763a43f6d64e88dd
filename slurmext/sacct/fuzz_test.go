package sacct

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/gpuprof/gpuprof/slurmext"
)

func FuzzSacctText(f *testing.F) {
	// which 0: no column list (a header decides; header-less text is read
	// with gpuprof's own list, current or the 24-column one before it).
	addFixtureSeeds(f, "sacct", func(s string) { f.Add(s, uint8(0)) })
	f.Add(sacctLine("100", map[string]string{"JobName": "a|b\nc"})+"\n"+sacctLine("101", nil), uint8(0))
	f.Add(strings.Join(Fields(), "|")+"|\n"+sacctLine("100", nil)+"|\n", uint8(0))
	f.Add("6_1|10|COMPLETED\n12+1|13|CANCELLED by 1000\n25_[1-4%2]|25|PENDING\n7.batch|7.batch|x\n", uint8(1))
	f.Add("1|x|y\n|\n\n||||\n", uint8(2))
	f.Fuzz(func(t *testing.T, input string, which uint8) {
		fields := [][]string{nil, {"JobID", "JobIDRaw", "State"}, {"JobIDRaw", "JobName", "Start"}}[int(which)%3]
		r := NewReader(strings.NewReader(input), fields, Options{MaxLineBytes: 512, Cluster: "c"})
		lastLine := 0
		maxCalls := strings.Count(input, "\n") + 2
		for call := 0; ; call++ {
			if call > maxCalls {
				t.Fatalf("more than %d calls of Next on %d lines", maxCalls, maxCalls-2)
			}
			rec, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			// Text that does not fit its columns is refused as a whole, with
			// the same error on every later call.
			var lay *LayoutError
			if errors.As(err, &lay) {
				checkErrorMessage(t, lay)
				if _, again := r.Next(); !errors.Is(again, ErrLayout) {
					t.Fatalf("after a layout error, Next = %v", again)
				}
				break
			}
			var le *LineError
			if errors.As(err, &le) {
				if le.Line <= lastLine && !errors.Is(le, slurmext.ErrTooLarge) {
					t.Fatalf("line error at line %d after line %d", le.Line, lastLine)
				}
				lastLine = le.Line
				checkErrorMessage(t, le)
				continue
			}
			if err != nil {
				t.Fatalf("Next = %v, want a record, a *LineError or EOF", err)
			}
			checkRecord(t, rec)
			checkNotes(t, r.Problems())
			if rec.Source != "sacct" {
				t.Fatalf("source %q", rec.Source)
			}
		}
	})
}

func FuzzSacctJSON(f *testing.F) {
	addFixtureSeeds(f, "sacctjson", func(s string) { f.Add(s) })
	f.Add(jsonDoc(`{"job_id": 7, "array": {"job_id": 7, "task": "0x1E"}, "state": {"current": ["CANCELLED", "REQUEUED"]}}`))
	f.Add(`{"errors": [{"error": "x"}], "jobs": [{"job_id": "8", "time": {"limit": {"infinite": true}}, "name": 5}]}`)
	f.Add(`{"jobs": [{"job_id": 7}, {"job_id": 8, "na`)
	f.Fuzz(func(t *testing.T, doc string) {
		recs, problems, err := parseJSON(strings.NewReader(doc), "c", 4096)
		if err != nil {
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, slurmext.ErrTooLarge) {
				t.Fatalf("error %v wraps no sentinel", err)
			}
			checkErrorMessage(t, err)
		}
		for _, p := range problems {
			if !errors.Is(p, ErrMalformed) {
				t.Fatalf("problem %v does not wrap ErrMalformed", p)
			}
			checkErrorMessage(t, p)
		}
		for _, r := range recs {
			checkRecord(t, r)
		}
	})
}
