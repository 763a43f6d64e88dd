package history_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/history"
)

// withoutColumn returns sacct -P text without the column named name. A
// line with too few columns is the head of a job name with a line break:
// it is joined with the lines that follow before the cut, which counts
// from the end of the record (a name may hold '|'; nothing after it does).
func withoutColumn(t *testing.T, text, name string) string {
	t.Helper()
	ls := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	header := strings.Split(ls[0], "|")
	i := slices.Index(header, name)
	if i < 0 {
		t.Fatalf("no column %s", name)
	}
	fromEnd := len(header) - 1 - i
	out := []string{strings.Join(slices.Delete(header, i, i+1), "|")}
	for k := 1; k < len(ls); k++ {
		rec := ls[k]
		for strings.Count(rec, "|")+1 < len(header) && k+1 < len(ls) {
			k++
			rec += "\n" + ls[k]
		}
		f := strings.Split(rec, "|")
		j := len(f) - 1 - fromEnd
		out = append(out, strings.Join(slices.Delete(f, j, j+1), "|"))
	}
	return strings.Join(out, "\n") + "\n"
}

// TestImportGPUsFromAllocTRES: real sacct text without its ReqTRES column
// imports each job with the GPUs it was allocated, and the result counts
// where the GPUs came from.
func TestImportGPUsFromAllocTRES(t *testing.T) {
	ctx := context.Background()
	text := string(fixture(t, "sacct", "22.05-P-steps-iso.txt"))
	tests := []struct {
		name string
		text string
		want history.GPUSources
	}{
		{name: "ReqTRES and AllocTRES", text: text, want: history.GPUSources{ReqTRES: 26}},
		// Five jobs never started (9, 12+0, 12+1, 21+0, 21+1): their
		// AllocTRES is empty.
		{name: "AllocTRES only", text: withoutColumn(t, text, "ReqTRES"), want: history.GPUSources{AllocTRES: 21, Neither: 5}},
		{name: "neither", text: withoutColumn(t, withoutColumn(t, text, "ReqTRES"), "AllocTRES"), want: history.GPUSources{Neither: 26}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := openDB(t)
			res := importString(t, db, tt.text, history.FormatText, history.Options{Cluster: "gpuproftest"})
			if res.GPUsFrom != tt.want || res.Read != 26 {
				t.Errorf("%d jobs read, GPUs from %+v; want 26, %+v", res.Read, res.GPUsFrom, tt.want)
			}
			r, err := db.GetSchedJob(ctx, "gpuproftest", "1")
			if err != nil {
				t.Fatal(err)
			}
			if tt.want.Neither < 26 && r.ReqGPUs != 2 {
				t.Errorf("job 1 (--gres=gpu:2): %d GPUs from %q", r.ReqGPUs, r.GPUsFrom)
			}
		})
	}
}

// TestImportBOM: a byte order mark at the head of the file changes
// nothing, in text (with a header or without) and in JSON.
func TestImportBOM(t *testing.T) {
	const bom = "\xef\xbb\xbf"
	for _, tt := range []struct {
		file   []string
		format string
		read   int
	}{
		{file: []string{"sacct", "22.05-P-steps-iso.txt"}, format: history.FormatText, read: 26},
		{file: []string{"real", "22.05-own-XP-epoch-noheader.txt"}, format: history.FormatText, read: 12},
		{file: []string{"sacctjson", "22.05-dbv0.0.38.json"}, format: history.FormatJSON, read: 27},
	} {
		t.Run(tt.file[1], func(t *testing.T) {
			plain := string(fixture(t, tt.file...))
			in := bom + plain
			if got := history.DetectFormat([]byte(in)); got != tt.format {
				t.Errorf("DetectFormat = %q, want %q", got, tt.format)
			}
			want := importString(t, openDB(t), plain, tt.format, history.Options{Cluster: "gpuproftest"})
			res := importString(t, openDB(t), in, tt.format, history.Options{Cluster: "gpuproftest"})
			if res.Read != tt.read || want.Read != tt.read || res.Skipped != want.Skipped {
				t.Errorf("%d read, %d skipped (%v); want %d, %d", res.Read, res.Skipped, res.Problems, tt.read, want.Skipped)
			}
		})
	}
}

// TestImportDuplicates: a job id on several lines of one input with
// different content is reported (how many ids, the first few); the same
// line twice, and the runs of a requeued job that sacct -D and --json
// list, are not. Which line wins is the store's merge rule
// (docs/sacct.md, "Duplicate job ids").
func TestImportDuplicates(t *testing.T) {
	ctx := context.Background()
	text := string(fixture(t, "real", "22.05-own-XP-epoch-noheader.txt"))
	first := strings.SplitN(text, "\n", 2)[0] // job 1, COMPLETED, ended at 1796238269
	if !strings.HasPrefix(first, "1|1|") {
		t.Fatalf("fixture: first line %q", first)
	}
	// The same job id, another run's times and state: another cluster's job
	// 1, or an export edited by hand.
	other := strings.Replace(strings.Replace(first, "COMPLETED", "FAILED", 1), "|0:0|", "|1:0|", 1)
	tests := []struct {
		name   string
		in     string
		format string
		n      int
		ids    []string
	}{
		{name: "the same file twice", in: text + text, format: history.FormatText},
		{name: "sacct -D: a requeued job's runs", in: string(fixture(t, "sacct", "22.05-P-duplicates.txt")), format: history.FormatText},
		{name: "sacct --json: a requeued job's runs", in: string(fixture(t, "sacctjson", "22.05-dbv0.0.38.json")), format: history.FormatJSON},
		{name: "one job twice, different", in: text + other + "\n", format: history.FormatText, n: 1, ids: []string{"1"}},
		{name: "every job twice, different", in: text + shiftEnds(t, text), format: history.FormatText, n: 12,
			ids: []string{"1", "2", "3", "5", "6"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := importString(t, openDB(t), tt.in, tt.format, history.Options{Cluster: "gpuproftest"})
			if res.Conflicts != tt.n || !slices.Equal(res.ConflictIDs, tt.ids) {
				t.Errorf("%d conflicting ids %q; want %d %q", res.Conflicts, res.ConflictIDs, tt.n, tt.ids)
			}
		})
	}

	// Which wins: between two final reports the later end, whatever the
	// order of the lines; on the same end, the later line.
	for _, tt := range []struct {
		name, in, state string
	}{
		{name: "the later end, first", in: shiftEnds(t, first) + first + "\n", state: "COMPLETED"},
		{name: "the later end, last", in: first + "\n" + shiftEnds(t, first), state: "COMPLETED"},
		{name: "the same end: the later line", in: first + "\n" + other + "\n", state: "FAILED"},
	} {
		t.Run("wins: "+tt.name, func(t *testing.T) {
			db := openDB(t)
			importString(t, db, tt.in, history.FormatText, history.Options{Cluster: "gpuproftest"})
			r, err := db.GetSchedJob(ctx, "gpuproftest", "1")
			if err != nil {
				t.Fatal(err)
			}
			wantEnd := time.Unix(1796238269, 0)
			if strings.Contains(tt.name, "later end") {
				wantEnd = wantEnd.Add(time.Hour)
			}
			if string(r.State) != tt.state || !r.End.Equal(wantEnd) {
				t.Errorf("kept %s ending %v; want %s ending %v", r.State, r.End, tt.state, wantEnd)
			}
		})
	}
}

// shiftEnds moves the End (epoch seconds, the 12th of gpuprof's own 26
// columns, the 15th from the end: a name may hold '|') of every line of
// text an hour later.
func shiftEnds(t *testing.T, text string) string {
	t.Helper()
	var b strings.Builder
	for l := range strings.Lines(text) {
		f := strings.Split(strings.TrimSuffix(l, "\n"), "|")
		i := len(f) - 15
		var end int64
		if _, err := fmt.Sscan(f[i], &end); err != nil {
			t.Fatalf("End %q: %v", f[i], err)
		}
		f[i] = fmt.Sprint(end + 3600)
		b.WriteString(strings.Join(f, "|") + "\n")
	}
	return b.String()
}
