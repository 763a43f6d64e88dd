package sacct

import (
	"errors"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/gpuprof/gpuprof/slurmext"
)

// plantedWaits returns the lines of the real capture
// testdata/real/22.05-own-XP-epoch-noheader.txt (gpuprof's own 26 columns,
// no header) with Submit and Eligible moved back by wait seconds: the jobs
// of the capture started the second they were submitted, and a column
// order mistake between Submit and Start only shows where they differ.
// With swap, the Submit and Start columns change places, as in text
// written with --format=…,Start,Eligible,Submit,… and read without a header.
func plantedWaits(t *testing.T, wait int64, swap bool) string {
	t.Helper()
	b, err := os.ReadFile(fixtures + "/real/22.05-own-XP-epoch-noheader.txt")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Split(line, "|")
		sub := 8 + len(f) - 26 // job 8's name holds a '|'
		for _, i := range []int{sub, sub + 1} {
			v, err := strconv.ParseInt(f[i], 10, 64)
			if err != nil {
				t.Fatalf("line %q: column %d: %v", line, i, err)
			}
			f[i] = strconv.FormatInt(v-wait, 10)
		}
		if swap {
			f[sub], f[sub+2] = f[sub+2], f[sub]
		}
		out = append(out, strings.Join(f, "|"))
	}
	return strings.Join(out, "\n") + "\n"
}

func TestSacctReaderRefusesSwappedSubmitStart(t *testing.T) {
	// The same jobs in the right order read, with their hour of wait.
	recs, lerrs, _ := readAllSacct(t, NewReader(strings.NewReader(plantedWaits(t, 3600, false)), nil, Options{}))
	if len(recs) != 12 || len(lerrs) != 0 {
		t.Fatalf("right order: %d records, %d skipped; want 12, 0", len(recs), len(lerrs))
	}
	if w := recs[0].Start.Sub(recs[0].Submit); w.Seconds() != 3600 {
		t.Fatalf("wait %v, want 1h", w)
	}
	// Swapped: every record has Start an hour before Submit. The text is
	// refused as a whole, saying the order is wrong and how to declare it.
	_, err := NewReader(strings.NewReader(plantedWaits(t, 3600, true)), nil, Options{}).Next()
	var le *LayoutError
	if !errors.As(err, &le) {
		t.Fatalf("swapped columns: %v, want a *LayoutError", err)
	}
	for _, want := range []string{"11 hold Start before Submit", "another order", "--columns", "header line"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q\nlacks %q", err, want)
		}
	}
}

func TestSacctReaderTimeOrderLine(t *testing.T) {
	// One line of the real capture damaged: job 5 ends two hours before it
	// started; job 6 is eligible a day before it was submitted. Job 5 is
	// skipped with its reason, job 6 is read with Eligible unknown, and
	// the rest are read as they are.
	text := plantedWaits(t, 0, false)
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		f := strings.Split(l, "|")
		switch {
		case strings.HasPrefix(l, "5|"):
			f[11] = strconv.Itoa(1796238266 - 7200)
		case strings.HasPrefix(l, "6|"):
			f[9] = strconv.Itoa(1796238266 - 86400)
		case strings.HasPrefix(l, "7|"):
			f[11] = strconv.Itoa(1796238266 - 59) // within the tolerance
		}
		lines[i] = strings.Join(f, "|")
	}
	recs, lerrs, problems := readAllSacct(t, NewReader(strings.NewReader(strings.Join(lines, "\n")), nil, Options{}))
	if len(recs) != 11 || len(lerrs) != 1 {
		t.Fatalf("%d records, %d skipped; want 11, 1", len(recs), len(lerrs))
	}
	var toe *slurmext.TimeOrderError
	if !errors.As(lerrs[0], &toe) || !errors.Is(lerrs[0], slurmext.ErrTimeOrder) || toe.JobID != "5" || toe.Later != "End" || toe.Before != "Start" {
		t.Fatalf("skipped: %v, want job 5's End before its Start", lerrs[0])
	}
	if lerrs[0].Line != 4 || !strings.Contains(lerrs[0].Error(), "2h0m0s before Start") {
		t.Errorf("skipped: %v", lerrs[0])
	}
	for _, r := range recs {
		if r.JobID == "6" {
			if !r.Eligible.IsZero() || len(problems["6"]) != 1 || !strings.Contains(problems["6"][0], "Eligible") {
				t.Errorf("job 6: Eligible %v, notes %q; want unknown and noted", r.Eligible, problems["6"])
			}
		}
	}
}

func TestCheckTimeOrder(t *testing.T) {
	recs, _, _ := readAllSacct(t, NewReader(strings.NewReader(plantedWaits(t, 0, false)), nil, Options{}))
	for _, r := range recs {
		if err := slurmext.CheckTimeOrder(&r); err != nil {
			t.Errorf("real job %s: %v", r.JobID, err)
		}
	}
	// A real job cancelled while pending (Start None, End after Submit,
	// Eligible after End) is in order.
	f, err := os.Open(fixtures + "/real/22.05-cancelled-pending-P-epoch-steps.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sr := NewReader(f, nil, Options{})
	for {
		_, err := sr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("cancelled while pending: %v", err)
		}
	}
	r := recs[0]
	r.End = r.Submit.Add(-slurmext.TimeOrderSkew - 1e9)
	r.Start = r.End.Add(-1e9)
	if err := slurmext.CheckTimeOrder(&r); err == nil || !strings.Contains(err.Error(), "Start") {
		t.Errorf("Start before Submit: %v", err)
	}
}
