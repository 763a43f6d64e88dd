package history_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/history"
	"github.com/gpuprof/gpuprof/slurmext/sacct"
	"github.com/gpuprof/gpuprof/store"
)

var t0 = time.Date(2026, 10, 1, 8, 0, 0, 0, time.UTC)

func openDB(t testing.TB) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "central.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// row is one line of `SLURM_TIME_FORMAT=%s sacct -a -X -P --noheader
// --format=<sacct.Format>`. A zero end prints as sacct prints a running
// job's: Unknown.
func row(id string, uid int, start, end time.Time, state, cluster string) string {
	endField := "Unknown"
	if !end.IsZero() {
		endField = strconv.FormatInt(end.Unix(), 10)
	}
	fields := []string{
		id, id, "train", fmt.Sprintf("user%d", uid), strconv.Itoa(uid), "vision", "gpu", "normal",
		strconv.FormatInt(start.Add(-time.Minute).Unix(), 10), strconv.FormatInt(start.Add(-time.Minute).Unix(), 10),
		strconv.FormatInt(start.Unix(), 10), endField, "00:10:00", "01:00:00", state, "0:0", "0:0",
		"gpu01", "1", "8", "billing=8,cpu=8,gres/gpu=1,mem=16000M,node=1", "billing=8,cpu=8,gres/gpu=1,node=1", "None", cluster,
		"", "", // TRESUsageInMax, TRESUsageInAve: empty on a job line
		"", "", "", // TotalCPU (the steps' sum), MaxRSS (per step), ReqMem
	}
	if n := len(sacct.Fields()); len(fields) != n {
		panic(fmt.Sprintf("row has %d fields, SacctFormat %d", len(fields), n))
	}
	return strings.Join(fields, "|")
}

func lines(ls ...string) string { return strings.Join(ls, "\n") + "\n" }

func importString(t *testing.T, db *store.DB, in, format string, o history.Options) history.Result {
	t.Helper()
	res, err := history.Import(context.Background(), db, strings.NewReader(in), format, o)
	if err != nil {
		t.Fatalf("Import: %v", err)
	}
	return res
}

type counts struct{ read, inserted, updated, unchanged, skipped int }

func countsOf(r history.Result) counts {
	return counts{r.Read, r.Inserted, r.Updated, r.Unchanged, r.Skipped}
}

func TestImportText(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	end1, end2 := t0.Add(time.Hour), t0.Add(3*time.Hour)
	good := []string{
		row("101", 1001, t0, end1, "COMPLETED", "lab"),
		row("102", 1002, t0.Add(time.Hour), end2, "FAILED", "lab"),
		row("103", 1001, t0.Add(2*time.Hour), time.Time{}, "RUNNING", "lab"),
	}
	truncated := row("104", 1001, t0, end1, "COMPLETED", "lab")[:40] // cut inside Submit
	in := lines(good[0], good[1], "this is not sacct output", good[2]) + truncated

	res := importString(t, db, in, history.FormatText, history.Options{Cluster: "lab"})
	if got, want := countsOf(res), (counts{read: 3, inserted: 3, skipped: 2}); got != want {
		t.Errorf("counts = %+v, want %+v", got, want)
	}
	var lineNos []int
	for _, p := range res.Problems {
		var le *sacct.LineError
		if !errors.As(p, &le) {
			t.Errorf("problem %v is not a *sacct.LineError", p)
			continue
		}
		lineNos = append(lineNos, le.Line)
	}
	if want := []int{3, 5}; !slices.Equal(lineNos, want) {
		t.Errorf("problem lines = %v, want %v", lineNos, want)
	}
	if !res.Last.Equal(end2) {
		t.Errorf("Last = %v, want the latest end %v", res.Last, end2)
	}
	if mark, err := db.GetImportMark(ctx, "lab", history.Source); err != nil || !mark.Equal(end2) {
		t.Errorf("import mark = %v, %v; want %v", mark, err, end2)
	}
	got, err := db.GetSchedJob(ctx, "lab", "102")
	if err != nil {
		t.Fatal(err)
	}
	if got.Source != history.Source || got.UID != 1002 || got.State != "FAILED" || !got.End.Equal(end2) || got.ReqGPUs != 1 {
		t.Errorf("stored 102 = source %q uid %d state %s end %v gpus %d; want sacct 1002 FAILED %v 1",
			got.Source, got.UID, got.State, got.End, got.ReqGPUs, end2)
	}
	if _, err := db.GetSchedJob(ctx, "lab", "104"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("truncated job 104: GetSchedJob err = %v, want ErrNotFound", err)
	}

	// The same input again changes nothing.
	res = importString(t, db, in, history.FormatText, history.Options{Cluster: "lab"})
	if got, want := countsOf(res), (counts{read: 3, unchanged: 3, skipped: 2}); got != want {
		t.Errorf("re-import counts = %+v, want %+v", got, want)
	}

	// 103 finished since; an older job's report must not move the mark back.
	end3 := t0.Add(5 * time.Hour)
	res = importString(t, db, lines(row("103", 1001, t0.Add(2*time.Hour), end3, "COMPLETED", "lab")), history.FormatText, history.Options{Cluster: "lab"})
	if got, want := countsOf(res), (counts{read: 1, updated: 1}); got != want {
		t.Errorf("update counts = %+v, want %+v", got, want)
	}
	res = importString(t, db, lines(row("90", 1001, t0.Add(-48*time.Hour), t0.Add(-47*time.Hour), "COMPLETED", "lab")), history.FormatText, history.Options{Cluster: "lab"})
	if got, want := countsOf(res), (counts{read: 1, inserted: 1}); got != want {
		t.Errorf("old job counts = %+v, want %+v", got, want)
	}
	if mark, err := db.GetImportMark(ctx, "lab", history.Source); err != nil || !mark.Equal(end3) {
		t.Errorf("import mark after an older job = %v, %v; want %v", mark, err, end3)
	}
}

func TestImportClusterFromOptions(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	in := lines(row("7", 1001, t0, t0.Add(time.Hour), "COMPLETED", ""), row("8", 1001, t0, t0.Add(time.Hour), "COMPLETED", "other"))
	res := importString(t, db, in, history.FormatText, history.Options{Cluster: "lab"})
	if got, want := countsOf(res), (counts{read: 2, inserted: 2}); got != want {
		t.Errorf("counts = %+v, want %+v", got, want)
	}
	if _, err := db.GetSchedJob(ctx, "lab", "7"); err != nil {
		t.Errorf("job without a Cluster value: %v, want it under the option's cluster", err)
	}
	if _, err := db.GetSchedJob(ctx, "other", "8"); err != nil {
		t.Errorf("job with Cluster other: %v, want it kept under its own cluster", err)
	}
}

func TestImportBatches(t *testing.T) {
	db := openDB(t)
	var rows []string
	for i := range 5 {
		rows = append(rows, row(strconv.Itoa(200+i), 1001, t0.Add(time.Duration(i)*time.Hour), t0.Add(time.Duration(i)*time.Hour+time.Minute), "COMPLETED", "lab"))
	}
	var progress []int
	res := importString(t, db, lines(rows...), history.FormatText, history.Options{
		Cluster: "lab", Batch: 2, Progress: func(read int, _ time.Duration) { progress = append(progress, read) }})
	if got, want := countsOf(res), (counts{read: 5, inserted: 5}); got != want {
		t.Errorf("counts = %+v, want %+v", got, want)
	}
	if want := []int{2, 4, 5}; !slices.Equal(progress, want) {
		t.Errorf("progress calls = %v, want %v (one per batch)", progress, want)
	}
}

// Each batch is its own transaction when the database holds more than a
// quarter as many jobs as the first batch (no bulk load): a cancel keeps the
// batches committed before it. TestImportBulkCancelled is the other case.
func TestImportCancelled(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	importString(t, db, lines(row("1", 1001, t0, t0.Add(time.Minute), "COMPLETED", "seed"),
		row("2", 1001, t0, t0.Add(time.Minute), "COMPLETED", "seed")), history.FormatText, history.Options{Cluster: "seed"})
	var rows []string
	for i := range 5 {
		rows = append(rows, row(strconv.Itoa(300+i), 1001, t0.Add(time.Duration(i)*time.Hour), t0.Add(time.Duration(i)*time.Hour+time.Minute), "COMPLETED", "lab"))
	}

	cctx, cancel := context.WithCancel(ctx)
	res, err := history.Import(cctx, db, strings.NewReader(lines(rows...)), history.FormatText, history.Options{
		Cluster: "lab", Batch: 2, Progress: func(int, time.Duration) { cancel() }})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if res.Inserted != 2 {
		t.Errorf("inserted %d before the cancel, want the first batch of 2", res.Inserted)
	}
	if _, err := db.GetSchedJob(ctx, "lab", "301"); err != nil {
		t.Errorf("job of the committed batch: %v", err)
	}
	if _, err := db.GetSchedJob(ctx, "lab", "302"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("job after the cancel: err = %v, want ErrNotFound", err)
	}
	if mark, _ := db.GetImportMark(ctx, "lab", history.Source); !mark.Equal(t0.Add(time.Hour + time.Minute)) {
		t.Errorf("mark = %v, want the end of the last committed job %v", mark, t0.Add(time.Hour+time.Minute))
	}

	done, cancel2 := context.WithCancel(ctx)
	cancel2()
	res, err = history.Import(done, db, strings.NewReader(lines(rows...)), history.FormatText, history.Options{Cluster: "lab"})
	if !errors.Is(err, context.Canceled) || res.Read != 0 {
		t.Errorf("cancelled before the start: read %d, err %v; want 0, context.Canceled", res.Read, err)
	}
}

func TestImportUnknownFormat(t *testing.T) {
	if _, err := history.Import(context.Background(), openDB(t), strings.NewReader(""), "xml", history.Options{}); err == nil {
		t.Error("Import of format xml: no error")
	}
}

func fixture(t testing.TB, parts ...string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(append([]string{"..", "slurmext", "testdata"}, parts...)...))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestImportCapturedText imports sacct -P text captured from Slurm 22.05.
func TestImportCapturedText(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	epoch := string(fixture(t, "sacct", "22.05-XP-epoch-noheader.txt"))
	// 27 lines, one of them the second half of job 24's name ("nl\nx").
	res := importString(t, db, epoch, history.FormatText, history.Options{Cluster: "gpuproftest"})
	if got, want := countsOf(res), (counts{read: 26, inserted: 26}); got != want {
		t.Errorf("counts = %+v, want %+v (problems %v)", got, want, res.Problems)
	}
	if want := time.Unix(1796211184, 0); !res.Last.Equal(want) {
		t.Errorf("Last = %v, want job 8's end %v", res.Last, want)
	}
	if mark, err := db.GetImportMark(ctx, "gpuproftest", history.Source); err != nil || !mark.Equal(res.Last) {
		t.Errorf("mark = %v, %v, want %v", mark, err, res.Last)
	}
	// Job 14's name holds an ANSI escape: the record is kept, the value
	// cleaned, and the import says so.
	if !slices.ContainsFunc(res.Notes, func(n string) bool { return strings.Contains(n, "14") && strings.Contains(n, "JobName") }) {
		t.Errorf("notes = %q, want one on job 14's JobName", res.Notes)
	}
	for _, id := range []string{"3", "24", "13", "27"} {
		if _, err := db.GetSchedJob(ctx, "gpuproftest", id); err != nil {
			t.Errorf("job %s: %v", id, err)
		}
	}
	if r, err := db.GetSchedJob(ctx, "gpuproftest", "3"); err == nil && r.Name != "name|with|pipes" {
		t.Errorf("job 3 name = %q, want name|with|pipes", r.Name)
	}

	res = importString(t, db, epoch, history.FormatText, history.Options{Cluster: "gpuproftest"})
	if got, want := countsOf(res), (counts{read: 26, unchanged: 26}); got != want {
		t.Errorf("re-import counts = %+v, want %+v", got, want)
	}

	// -P with steps and a header: steps are read past, not skipped jobs.
	steps := string(fixture(t, "sacct", "22.05-P-steps-iso.txt"))
	res = importString(t, openDB(t), steps, history.FormatText, history.Options{Cluster: "gpuproftest"})
	if res.Skipped != 0 || res.Read == 0 || res.Inserted != res.Read {
		t.Errorf("steps file: counts %+v, want every job inserted, none skipped (problems %v)", countsOf(res), res.Problems)
	}
}

func TestImportCapturedRequeue(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	// sacct -D: the pending array 25, job 26's REQUEUED run, a step, and
	// job 26's final run.
	res := importString(t, db, string(fixture(t, "sacct", "22.05-P-duplicates.txt")), history.FormatText, history.Options{Cluster: "gpuproftest"})
	if got, want := countsOf(res), (counts{read: 3, inserted: 2, updated: 1}); got != want {
		t.Errorf("counts = %+v, want %+v", got, want)
	}
	r, err := db.GetSchedJob(ctx, "gpuproftest", "26")
	if err != nil {
		t.Fatal(err)
	}
	if r.State != "COMPLETED" || r.Restarts != 1 {
		t.Errorf("job 26 = %s with %d restarts, want COMPLETED with 1", r.State, r.Restarts)
	}
}

func TestImportJSON(t *testing.T) {
	tests := []struct {
		file      string
		wantRead  int
		wantLast  int64
		wantTotal int // distinct jobs
	}{
		{file: "22.05-dbv0.0.38.json", wantRead: 27, wantTotal: 26, wantLast: 1796211184},
		{file: "22.05-dbv0.0.38-steps.json", wantRead: 2, wantTotal: 2},
		{file: "22.05-dbv0.0.38-array-pending.json", wantRead: 1, wantTotal: 1},
		{file: "23.02-v0.0.39.json", wantRead: 5, wantTotal: 5},
		{file: "23.11-v0.0.40.json", wantRead: 5, wantTotal: 5},
		{file: "24.05-v0.0.41.json", wantRead: 5, wantTotal: 5},
		{file: "25.05-v0.0.43.json", wantRead: 5, wantTotal: 5},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			ctx := context.Background()
			in := fixture(t, "sacctjson", tt.file)
			if got := history.DetectFormat(in[:min(len(in), 512)]); got != history.FormatJSON {
				t.Errorf("DetectFormat = %q, want json", got)
			}
			db := openDB(t)
			res := importString(t, db, string(in), history.FormatJSON, history.Options{Cluster: "fallback"})
			if res.Read != tt.wantRead || res.Inserted != tt.wantTotal || res.Inserted+res.Updated+res.Unchanged != res.Read {
				t.Errorf("counts = %+v, want %d read, %d inserted (problems %v)", countsOf(res), tt.wantRead, tt.wantTotal, res.Problems)
			}
			if tt.wantLast != 0 && !res.Last.Equal(time.Unix(tt.wantLast, 0)) {
				t.Errorf("Last = %v, want %v", res.Last, time.Unix(tt.wantLast, 0))
			}
			if mark, err := db.GetImportMark(ctx, "fallback", history.Source); err != nil || !mark.Equal(res.Last) {
				t.Errorf("mark = %v, %v; want %v", mark, err, res.Last)
			}
			views, err := db.ReaderFor(store.System).ListViews(ctx, store.ViewFilter{})
			if err != nil {
				t.Fatal(err)
			}
			if len(views) != tt.wantTotal {
				t.Errorf("%d jobs stored, want %d", len(views), tt.wantTotal)
			}
			for _, v := range views {
				if v.Sched == nil || v.Sched.Source != history.Source {
					t.Errorf("job %s/%s: sched %+v, want a record from sacct", v.Cluster, v.JobID, v.Sched)
				}
			}
			res = importString(t, db, string(in), history.FormatJSON, history.Options{Cluster: "fallback"})
			if res.Unchanged != res.Read || res.Inserted != 0 || res.Updated != 0 {
				t.Errorf("re-import counts = %+v, want all unchanged", countsOf(res))
			}
		})
	}
}

// TestImportJSONTruncated: a cut-off document yields its complete jobs and
// an error.
func TestImportJSONTruncated(t *testing.T) {
	in := fixture(t, "sacctjson", "22.05-dbv0.0.38.json")
	db := openDB(t)
	res, err := history.Import(context.Background(), db, bytes.NewReader(in[:len(in)/2]), history.FormatJSON, history.Options{Cluster: "x"})
	if !errors.Is(err, sacct.ErrMalformed) {
		t.Errorf("err = %v, want ErrBadSacct", err)
	}
	if res.Read == 0 || res.Read >= 27 || res.Inserted+res.Updated+res.Unchanged != res.Read {
		t.Errorf("counts = %+v, want the jobs before the cut stored", countsOf(res))
	}
	views, lerr := db.ReaderFor(store.System).ListViews(context.Background(), store.ViewFilter{})
	if lerr != nil {
		t.Fatal(lerr)
	}
	if len(views) != res.Inserted {
		t.Errorf("%d jobs stored, want %d", len(views), res.Inserted)
	}
}

func TestDetectFormat(t *testing.T) {
	tests := []struct {
		name string
		head string
		want string
	}{
		{name: "json", head: `{"meta":{}}`, want: history.FormatJSON},
		{name: "json after white space", head: " \r\n\t{", want: history.FormatJSON},
		{name: "text", head: "1|1|ok|root|0", want: history.FormatText},
		{name: "text with header", head: "JobID|JobIDRaw|JobName", want: history.FormatText},
		{name: "empty", head: "", want: history.FormatText},
		{name: "only space", head: "  \n", want: history.FormatText},
		{name: "json array is not sacct json", head: "[{}]", want: history.FormatText},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := history.DetectFormat([]byte(tt.head)); got != tt.want {
				t.Errorf("DetectFormat(%q) = %q, want %q", tt.head, got, tt.want)
			}
		})
	}
}

// TestImportAuto: FormatAuto reads sacct --json as JSON and anything else
// as text, as DetectFormat tells them apart.
func TestImportAuto(t *testing.T) {
	json := fixture(t, "sacctjson", "23.02-v0.0.39.json")
	if res := importString(t, openDB(t), "\xef\xbb\xbf"+string(json), history.FormatAuto, history.Options{Cluster: "c"}); res.Read != 5 {
		t.Errorf("json: %+v (problems %v), want 5 read", countsOf(res), res.Problems)
	}
	text := lines(row("101", 1001, t0, t0.Add(time.Hour), "COMPLETED", "lab"))
	if res := importString(t, openDB(t), text, history.FormatAuto, history.Options{Cluster: "lab"}); res.Read != 1 {
		t.Errorf("text: %+v (problems %v), want 1 read", countsOf(res), res.Problems)
	}
	// What the real test cluster's sacct printed (22.05, --json and -P):
	// detected as what it is, the same jobs as when the format is named.
	for _, tc := range []struct{ dir, file, format string }{
		{"sacctjson", "22.05-dbv0.0.38.json", history.FormatJSON},
		{"real", "22.05-cancelled-pending-P-epoch-steps.txt", history.FormatText},
	} {
		data := string(fixture(t, tc.dir, tc.file))
		named := importString(t, openDB(t), data, tc.format, history.Options{Cluster: "gpuproftest"})
		auto := importString(t, openDB(t), data, history.FormatAuto, history.Options{Cluster: "gpuproftest"})
		if named.Read == 0 || countsOf(auto) != countsOf(named) {
			t.Errorf("%s: detected %+v, named %s %+v; want the same jobs read", tc.file, countsOf(auto), tc.format, countsOf(named))
		}
	}
}

func TestSacctCommand(t *testing.T) {
	since := time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC)
	until := since.Add(30 * 24 * time.Hour)
	cmd := history.SacctCommand(context.Background(), "/opt/slurm/bin/sacct", since, until)
	if cmd.Args[0] != "/opt/slurm/bin/sacct" {
		t.Errorf("Args[0] = %q, want the sacct given", cmd.Args[0])
	}
	args := cmd.Args[1:]
	for _, want := range []string{"-a", "-P", "--format=" + sacct.Format} {
		if !slices.Contains(args, want) {
			t.Errorf("args %q lack %q", args, want)
		}
	}
	// The header maps the columns; steps carry Slurm's GPU readings.
	for _, unwanted := range []string{"-X", "--noheader", "-n"} {
		if slices.Contains(args, unwanted) {
			t.Errorf("args %q hold %q", args, unwanted)
		}
	}
	const layout = "2006-01-02T15:04:05"
	for flag, want := range map[string]string{"--starttime": since.Local().Format(layout), "--endtime": until.Local().Format(layout)} {
		i := slices.Index(args, flag)
		if i < 0 || i+1 >= len(args) || args[i+1] != want {
			t.Errorf("args %q: %s is not followed by %s", args, flag, want)
		}
	}
	if last := cmd.Env[len(cmd.Env)-1]; last != "SLURM_TIME_FORMAT=%s" {
		t.Errorf("last env entry = %q, want SLURM_TIME_FORMAT=%%s (the last one wins over an inherited value)", last)
	}
}

// TestSacctCommandRuns runs the command against a stand-in sacct that
// prints what it got, with SLURM_TIME_FORMAT already set in the
// environment as an admin's profile might.
func TestSacctCommandRuns(t *testing.T) {
	t.Setenv("SLURM_TIME_FORMAT", "standard")
	fake := filepath.Join(t.TempDir(), "sacct")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\necho \"$SLURM_TIME_FORMAT\"\nfor a; do echo \"$a\"; done\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := history.SacctCommand(context.Background(), fake, t0, t0.Add(time.Hour)).Output()
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	got := strings.Split(strings.TrimSpace(string(out)), "\n")
	if got[0] != "%s" {
		t.Errorf("sacct saw SLURM_TIME_FORMAT=%q, want %%s", got[0])
	}
	if !slices.Contains(got, "--format="+sacct.Format) {
		t.Errorf("sacct saw args %q, want the format list as one argument", got[1:])
	}
}

// genSacct returns n rows of sacct text with distinct job ids.
func genSacct(n int) []byte {
	var b bytes.Buffer
	for i := range n {
		start := t0.Add(time.Duration(i) * time.Second)
		b.WriteString(row(strconv.Itoa(100000+i), 1000+i%50, start, start.Add(time.Duration(i%3600)*time.Second), "COMPLETED", "lab"))
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// BenchmarkImportText imports 100k sacct rows into a fresh database per
// iteration (a year of a busy lab's jobs).
func BenchmarkImportText(b *testing.B) {
	const rows = 100_000
	in := genSacct(rows)
	ctx := context.Background()
	var took time.Duration
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		db, err := store.Open(ctx, filepath.Join(b.TempDir(), fmt.Sprintf("bench%d.db", i)), store.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		began := time.Now()
		res, err := history.Import(ctx, db, bytes.NewReader(in), history.FormatText, history.Options{Cluster: "lab"})
		took += time.Since(began)
		b.StopTimer()
		if err != nil || res.Inserted != rows {
			b.Fatalf("Import: %+v, %v; want %d inserted", countsOf(res), err, rows)
		}
		db.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(rows*b.N)/took.Seconds(), "rows/s")
}

// TestImportJSONTruncatedNotStored: when the records before the cut cannot
// be stored either, the error says so rather than that they were imported.
func TestImportJSONTruncatedNotStored(t *testing.T) {
	in := fixture(t, "sacctjson", "22.05-dbv0.0.38.json")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := history.Import(ctx, openDB(t), bytes.NewReader(in[:len(in)/2]), history.FormatJSON, history.Options{Cluster: "x"})
	if !errors.Is(err, context.Canceled) || !errors.Is(err, sacct.ErrMalformed) {
		t.Errorf("err = %v, want both the store's (context.Canceled) and the JSON error", err)
	}
	if err != nil && strings.Contains(err.Error(), "were imported") {
		t.Errorf("err = %v claims records were imported", err)
	}
	if res.Inserted != 0 {
		t.Errorf("inserted %d with a cancelled context", res.Inserted)
	}
}
