package sacct

import (
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/gpuprof/gpuprof/slurmext"
)

// TestSacctReaderRealLayouts: the test cluster's sacct text in each layout
// gives the same jobs as gpuprof's own layout, field by field for the
// fields the layout has.
func TestSacctReaderRealLayouts(t *testing.T) {
	ref, lineErrs, _ := readAllSacct(t, NewReader(openFixture(t, "real", "22.05-own-P-epoch-steps.txt"), nil, Options{}))
	if len(ref) != 12 || len(lineErrs) != 0 {
		t.Fatalf("reference: %d jobs, %v", len(ref), lineErrs)
	}
	issue := strings.Split("JobID,JobIDRaw,JobName,User,Account,Partition,QOS,Submit,Eligible,Start,End,Elapsed,Timelimit,State,ExitCode,NodeList,ReqTRES,AllocTRES", ",")
	tests := []struct {
		file   string
		fields []string // for header-less files
		has    []string // the JobRecord fields the layout fills
	}{
		{file: "22.05-own-XP-epoch-noheader.txt", has: nil}, // all
		{file: "22.05-issue-P-steps.txt", has: []string{"JobID", "DisplayID", "ArrayJobID", "ArrayTaskID", "Name", "User", "Account", "Partition", "QOS",
			"Submit", "Eligible", "Start", "End", "TimeLimit", "Unlimited", "State", "CancelledBy", "ExitStatus", "ExitSignal", "NodeList",
			"ReqTRES", "AllocTRES", "ReqGPUs", "ReqShards"}},
		{file: "22.05-issue-XP-noheader.txt", fields: issue, has: []string{"JobID", "DisplayID", "ArrayTaskID", "Name", "Submit", "End", "State", "ExitStatus", "AllocTRES"}},
		{file: "22.05-reordered-Xp.txt", has: []string{"JobID", "DisplayID", "ArrayJobID", "ArrayTaskID", "State", "CancelledBy", "Start", "End", "Name", "User",
			"ReqTRES", "ReqGPUs", "ReqShards", "TimeLimit", "Unlimited"}},
		{file: "22.05-jobidraw-P-steps.txt", has: []string{"JobID", "Name", "State", "Submit", "Start", "End", "TimeLimit", "ReqTRES", "ReqGPUs"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			got, lineErrs, problems := readAllSacct(t, NewReader(openFixture(t, "real", tt.file), tt.fields, Options{Cluster: "gpuproftest"}))
			if len(lineErrs) != 0 || len(problems) != 0 || len(got) != len(ref) {
				t.Fatalf("%d jobs, skipped %v, problems %q; want %d, none, none", len(got), lineErrs, problems, len(ref))
			}
			for i := range got {
				g, w := reflect.ValueOf(got[i]), reflect.ValueOf(ref[i])
				names := tt.has
				if names == nil {
					// Only step lines carry a memory peak: sacct -X has none.
					want := ref[i]
					want.Usage.MemPeak, want.Usage.MemPeakValid, want.Usage.MemPeakRead = 0, false, false
					if !reflect.DeepEqual(got[i], want) {
						t.Errorf("job %s:\n got %+v\nwant %+v", ref[i].JobID, got[i], want)
					}
					continue
				}
				for _, f := range names {
					if gv, wv := g.FieldByName(f).Interface(), w.FieldByName(f).Interface(); !reflect.DeepEqual(gv, wv) {
						t.Errorf("job %s: %s = %v, want %v", ref[i].JobID, f, gv, wv)
					}
				}
			}
		})
	}
}

// TestSacctReaderHeaders: what is a header, and what is data that looks
// like one.
func TestSacctReaderHeaders(t *testing.T) {
	tests := []struct {
		name   string
		fields []string
		input  string
		ids    []string
		states []string
		layout bool // refused
	}{
		{name: "widths and spaces in a header", input: " JobIDRaw | JobName%30 |State\n7|x|COMPLETED\n", ids: []string{"7"}, states: []string{"COMPLETED"}},
		{name: "header in lower case, -p", input: "state|jobidraw|\nFAILED|8|\n", ids: []string{"8"}, states: []string{"FAILED"}},
		{name: "unknown columns read past", input: "Comment|JobIDRaw|WorkDir|State\nhi|9|/tmp|TIMEOUT\n", ids: []string{"9"}, states: []string{"TIMEOUT"}},
		{name: "a SLUID data line shaped like a header", fields: []string{"JobIDRaw", "JobName"}, input: "s0C8F3K2M1A0ZX|User\n",
			ids: []string{"s0C8F3K2M1A0ZX"}, states: []string{""}},
		{name: "a new header re-maps", input: "JobIDRaw|State\n1|COMPLETED\nState|JobIDRaw\nFAILED|2\n", ids: []string{"1", "2"}, states: []string{"COMPLETED", "FAILED"}},
		{name: "header without job id", input: "State|User\nCOMPLETED|root\n", layout: true},
		{name: "header without job id after a good part", input: "JobIDRaw|State\n1|COMPLETED\nState|User\nCOMPLETED|root\n",
			ids: []string{"1"}, states: []string{"COMPLETED"}, layout: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewReader(strings.NewReader(tt.input), tt.fields, Options{})
			var ids, states []string
			var layoutErr error
			for {
				rec, err := r.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					layoutErr = err
					break
				}
				ids, states = append(ids, rec.JobID), append(states, string(rec.State))
			}
			if !reflect.DeepEqual(ids, tt.ids) || !reflect.DeepEqual(states, tt.states) {
				t.Errorf("jobs %q states %q, want %q %q", ids, states, tt.ids, tt.states)
			}
			var le *LayoutError
			if tt.layout != errors.As(layoutErr, &le) || (layoutErr != nil && !errors.Is(layoutErr, ErrLayout)) {
				t.Fatalf("error %v, want a LayoutError: %v", layoutErr, tt.layout)
			}
			if le != nil {
				checkErrorMessage(t, le)
				if _, err := r.Next(); !errors.Is(err, ErrLayout) {
					t.Errorf("Next after the LayoutError = %v, want it again", err)
				}
			}
		})
	}
}

// TestSacctReaderProbeWindow: the probe looks at the first 100 lines; bad
// lines after a good start are skipped one by one, a bad start refuses all.
func TestSacctReaderProbeWindow(t *testing.T) {
	var good, bad []string
	for i := range 150 {
		good = append(good, sacctLine(fmt.Sprint(1000+i), nil))
		bad = append(bad, fmt.Sprintf("%d,COMPLETED,gpu", 5000+i))
	}
	t.Run("good start", func(t *testing.T) {
		in := strings.Join(append(good, bad...), "\n") + "\n"
		recs, lineErrs, _ := readAllSacct(t, NewReader(strings.NewReader(in), nil, Options{}))
		if len(recs) != 150 || len(lineErrs) != 150 {
			t.Errorf("%d jobs, %d skipped; want 150 and 150", len(recs), len(lineErrs))
		}
	})
	t.Run("bad start", func(t *testing.T) {
		in := strings.Join(append(bad, good...), "\n") + "\n"
		r := NewReader(strings.NewReader(in), nil, Options{})
		_, err := r.Next()
		var le *LayoutError
		if !errors.As(err, &le) || le.Line != 1 || !strings.Contains(le.Reason, "0 of the first 100 records fit") {
			t.Fatalf("Next = %v, want a LayoutError for line 1 after 100 records", err)
		}
		checkErrorMessage(t, le)
	})
	t.Run("one long line is no reason to hold the file", func(t *testing.T) {
		in := strings.Repeat("x", 5000) + "\n" + strings.Join(good[:3], "\n") + "\n"
		recs, lineErrs, _ := readAllSacct(t, NewReader(strings.NewReader(in), nil, Options{MaxLineBytes: 1000}))
		if len(recs) != 3 || len(lineErrs) != 1 || !errors.Is(lineErrs[0], slurmext.ErrTooLarge) {
			t.Errorf("%d jobs, %v; want 3 and one ErrTooLarge", len(recs), lineErrs)
		}
	})
}

// TestParseSacctColumns checks --columns.
func TestParseSacctColumns(t *testing.T) {
	for in, ok := range map[string]bool{
		"JobIDRaw,State": true, " JobID , JobName%30 ": true, "State,Start": false, "JobIDRaw,,State": false,
		"JobIDRaw,St ate": false, "JobIDRaw|State": false, "": false,
	} {
		fields, err := ParseColumns(in)
		if (err == nil) != ok || (err != nil && !errors.Is(err, ErrMalformed)) {
			t.Errorf("ParseColumns(%q) = %q, %v; want ok %v", in, fields, err, ok)
		}
	}
}
