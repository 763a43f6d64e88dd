package history_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/history"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/slurmext/sacct"
	"github.com/gpuprof/gpuprof/store"
)

// issueColumns is the layout of issue 10: an admin's saved sacct history.
var issueColumns = strings.Split("JobID,JobIDRaw,JobName,User,Account,Partition,QOS,Submit,Eligible,Start,End,"+
	"Elapsed,Timelimit,State,ExitCode,NodeList,ReqTRES,AllocTRES", ",")

// realJobs are the allocations in slurmext/testdata/real (Slurm 22.05.8):
// raw ids in sacct's order.
var realJobs = []string{"1", "2", "3", "5", "6", "7", "8", "9", "10", "4", "11", "12"}

// dbState is what a refused import must leave as it was.
type dbState struct {
	jobs int
	mark time.Time
}

func stateOf(t *testing.T, db *store.DB, cluster string) dbState {
	t.Helper()
	ctx := context.Background()
	n, err := db.ReaderFor(store.System).CountViews(ctx, store.ViewFilter{})
	if err != nil {
		t.Fatal(err)
	}
	mark, err := db.GetImportMark(ctx, cluster, history.Source)
	if err != nil {
		t.Fatal(err)
	}
	return dbState{jobs: n, mark: mark}
}

// TestImportRefusesWhatDoesNotFit: text in another layout, or another
// tool's output, is refused as a whole with ErrSacctLayout and leaves the
// database (jobs and import mark) as it was.
func TestImportRefusesWhatDoesNotFit(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		columns []string
		want    []string // in the message
	}{
		{name: "reordered header without a job id column", in: string(fixture(t, "real", "22.05-no-jobid-XP.txt")),
			want: []string{"line 1", "neither JobID nor JobIDRaw", `"Partition|State|User|Start"`}},
		{name: "header-less, another --format (issue 10)", in: string(fixture(t, "real", "22.05-issue-XP-noheader.txt")),
			want: []string{"line 1", "0 of the first 6 records fit", "6 have another number of columns (e.g. 18, not 29)",
				"expected 29 columns", `"JobID|JobIDRaw|JobName|User|UID|`, `line 1 is "1|1|plain|root|root|gpu|normal|`}},
		{name: "header-less, columns given in another order", in: string(fixture(t, "real", "22.05-issue-XP-noheader.txt")),
			columns: []string{"JobIDRaw", "JobID", "JobName", "User", "Account", "Partition", "QOS", "Submit", "Eligible", "Start", "End",
				"Elapsed", "Timelimit", "ExitCode", "State", "NodeList", "ReqTRES", "AllocTRES"},
			want: []string{"values of another kind", "the columns given"}},
		{name: "squeue output", in: string(fixture(t, "real", "squeue.txt")), want: []string{"0 of the first 3 records fit"}},
		{name: "sacct without -P", in: string(fixture(t, "real", "22.05-sacct-default-columns.txt")), want: []string{"records fit"}},
		{name: "CSV", in: "JobID,State,Start\n1,COMPLETED,2026-12-02T19:04:26\n2,FAILED,2026-12-02T19:04:27\n", want: []string{"records fit"}},
		{name: "a log file", in: "Dec  2 19:04:26 gpu01 slurmd[123]: launch task 1.0\nDec  2 19:04:27 gpu01 slurmd[123]: done\n",
			want: []string{"records fit"}},
		{name: "random bytes", in: "\x00\x9f\x12|\xff\xfe\n\x01\x02\x03|||\n\x7f", want: []string{"records fit"}},
		{name: "job ids that are not job ids", in: lines("a|b|c|d", "e|f|g|h"), columns: []string{"JobIDRaw", "JobName", "User", "Account"},
			want: []string{"no job id"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := openDB(t)
			importString(t, db, lines(row("500", 1001, t0, t0.Add(time.Hour), "COMPLETED", "lab")), history.FormatText, history.Options{Cluster: "lab"})
			before := stateOf(t, db, "lab")
			res, err := history.Import(context.Background(), db, strings.NewReader(tt.in), history.FormatText,
				history.Options{Cluster: "lab", Columns: tt.columns})
			if !errors.Is(err, sacct.ErrLayout) || !errors.Is(err, sacct.ErrMalformed) {
				t.Fatalf("err = %v, want ErrSacctLayout", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if !strings.Contains(err.Error(), "nothing imported") {
				t.Errorf("error %q does not say that nothing was imported", err)
			}
			if res.Read != 0 || res.Inserted != 0 || res.Skipped != 0 {
				t.Errorf("result %+v, want nothing read", countsOf(res))
			}
			if after := stateOf(t, db, "lab"); after != before {
				t.Errorf("database %+v after the refusal, %+v before", after, before)
			}
		})
	}
}

// TestImportRealLayouts: sacct text of the test cluster in several
// --format layouts, with and without a header, -P and -p, with and without
// steps, imports the same jobs, with the same values in the columns each
// layout has.
func TestImportRealLayouts(t *testing.T) {
	ctx := context.Background()
	ref := openDB(t)
	res := importString(t, ref, string(fixture(t, "real", "22.05-own-P-epoch-steps.txt")), history.FormatText, history.Options{Cluster: "gpuproftest"})
	if res.Read != len(realJobs) || res.Skipped != 0 {
		t.Fatalf("reference: %+v (problems %v), want %d jobs", countsOf(res), res.Problems, len(realJobs))
	}
	tests := []struct {
		file    string
		columns []string
		check   func(got, want slurmext.JobRecord) bool
	}{
		{file: "22.05-own-XP-epoch-noheader.txt", check: func(g, w slurmext.JobRecord) bool {
			// Only step lines carry a memory peak: sacct -X has none, and
			// did not read it (HostUsage.MemPeakRead).
			w.Usage.MemPeak, w.Usage.MemPeakValid, w.Usage.MemPeakRead = 0, false, false
			return g == w
		}},
		{file: "22.05-issue-P-steps.txt", check: sameIssueColumns},
		{file: "22.05-issue-XP-noheader.txt", columns: issueColumns, check: sameIssueColumns},
		{file: "22.05-reordered-Xp.txt", check: func(g, w slurmext.JobRecord) bool {
			return g.JobID == w.JobID && g.DisplayID == w.DisplayID && g.State == w.State && g.CancelledBy == w.CancelledBy &&
				g.Start.Equal(w.Start) && g.End.Equal(w.End) && g.Name == w.Name && g.User == w.User &&
				g.ReqTRES == w.ReqTRES && g.ReqGPUs == w.ReqGPUs && g.ReqShards == w.ReqShards && g.TimeLimit == w.TimeLimit
		}},
		{file: "22.05-jobidraw-P-steps.txt", check: func(g, w slurmext.JobRecord) bool {
			return g.JobID == w.JobID && g.Name == w.Name && g.State == w.State && g.Submit.Equal(w.Submit) &&
				g.Start.Equal(w.Start) && g.End.Equal(w.End) && g.TimeLimit == w.TimeLimit && g.Unlimited == w.Unlimited && g.ReqTRES == w.ReqTRES
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			db := openDB(t)
			res := importString(t, db, string(fixture(t, "real", tt.file)), history.FormatText,
				history.Options{Cluster: "gpuproftest", Columns: tt.columns})
			if res.Read != len(realJobs) || res.Inserted != len(realJobs) || res.Skipped != 0 {
				t.Fatalf("counts %+v (problems %v), want %d jobs inserted", countsOf(res), res.Problems, len(realJobs))
			}
			for _, id := range realJobs {
				got, err := db.GetSchedJob(ctx, "gpuproftest", id)
				if err != nil {
					t.Fatalf("job %s: %v", id, err)
				}
				want, err := ref.GetSchedJob(ctx, "gpuproftest", id)
				if err != nil {
					t.Fatal(err)
				}
				if !tt.check(got, want) {
					t.Errorf("job %s:\n got %+v\nwant %+v", id, got, want)
				}
			}
		})
	}
}

// sameIssueColumns compares what issue 10's layout has.
func sameIssueColumns(g, w slurmext.JobRecord) bool {
	return g.JobID == w.JobID && g.DisplayID == w.DisplayID && g.ArrayJobID == w.ArrayJobID && g.ArrayTaskID == w.ArrayTaskID &&
		g.Name == w.Name && g.User == w.User && g.Account == w.Account && g.Partition == w.Partition && g.QOS == w.QOS &&
		g.Submit.Equal(w.Submit) && g.Eligible.Equal(w.Eligible) && g.Start.Equal(w.Start) && g.End.Equal(w.End) &&
		g.TimeLimit == w.TimeLimit && g.Unlimited == w.Unlimited && g.State == w.State && g.CancelledBy == w.CancelledBy &&
		g.ExitStatus == w.ExitStatus && g.ExitSignal == w.ExitSignal && g.NodeList == w.NodeList &&
		g.ReqTRES == w.ReqTRES && g.AllocTRES == w.AllocTRES && g.ReqGPUs == w.ReqGPUs && g.ReqShards == w.ReqShards
}

// TestImportConcatenated: several sacct outputs in one file, each with its
// own header and layout, import as one; a part that does not fit stops the
// import there, keeping the parts before it and saying so.
func TestImportConcatenated(t *testing.T) {
	ctx := context.Background()
	var parts []string
	// The fullest layout last: a later report wins the merge, and the store
	// keeps the winner's exit code even where its layout had no ExitCode
	// column (see the report of issue 10).
	for _, f := range []string{"22.05-jobidraw-P-steps.txt", "22.05-reordered-Xp.txt", "22.05-issue-P-steps.txt", "22.05-own-P-epoch-steps.txt"} {
		parts = append(parts, string(fixture(t, "real", f)))
	}
	db := openDB(t)
	all := strings.Join(parts, "")
	res := importString(t, db, all, history.FormatText, history.Options{Cluster: "gpuproftest"})
	if res.Read != 4*len(realJobs) || res.Inserted != len(realJobs) || res.Skipped != 0 {
		t.Errorf("counts %+v (problems %v), want %d read, %d inserted", countsOf(res), res.Problems, 4*len(realJobs), len(realJobs))
	}
	// Each part adds what it has: the jobs end up as the fullest layout
	// alone gives them, and reading it all again changes nothing.
	ref := openDB(t)
	importString(t, ref, parts[3], history.FormatText, history.Options{Cluster: "gpuproftest"})
	for _, id := range realJobs {
		got, err1 := db.GetSchedJob(ctx, "gpuproftest", id)
		want, err2 := ref.GetSchedJob(ctx, "gpuproftest", id)
		if err1 != nil || err2 != nil || got != want {
			t.Errorf("job %s: %v %v\n got %+v\nwant %+v", id, err1, err2, got, want)
		}
	}
	// Reading the fullest part again changes nothing.
	res = importString(t, db, parts[3], history.FormatText, history.Options{Cluster: "gpuproftest"})
	if want := (counts{read: len(realJobs), unchanged: len(realJobs)}); countsOf(res) != want {
		t.Errorf("again: counts %+v, want %+v", countsOf(res), want)
	}

	// gpuprof's own header-less text first, then a part with a header.
	db = openDB(t)
	in := string(fixture(t, "real", "22.05-own-XP-epoch-noheader.txt")) + parts[2]
	res = importString(t, db, in, history.FormatText, history.Options{Cluster: "gpuproftest"})
	if res.Read != 2*len(realJobs) || res.Skipped != 0 || res.Inserted != len(realJobs) {
		t.Errorf("header-less then header: counts %+v (problems %v)", countsOf(res), res.Problems)
	}

	// A second part whose header names no job id column.
	db = openDB(t)
	in = parts[2] + string(fixture(t, "real", "22.05-no-jobid-XP.txt"))
	res, err := history.Import(ctx, db, strings.NewReader(in), history.FormatText, history.Options{Cluster: "gpuproftest"})
	if !errors.Is(err, sacct.ErrLayout) || !strings.Contains(err.Error(), "the 12 jobs before it were imported") ||
		!strings.Contains(err.Error(), "line 29") {
		t.Fatalf("err = %v, want ErrSacctLayout at line 29 saying the 12 jobs before it were imported", err)
	}
	if st := stateOf(t, db, "gpuproftest"); st.jobs != len(realJobs) || res.Inserted != len(realJobs) {
		t.Errorf("%d jobs stored, %d inserted; want the first part's %d", st.jobs, res.Inserted, len(realJobs))
	}
}

// TestImportEmpty: sacct prints nothing (or a header alone) for a window
// without jobs; that is no jobs, not an error.
func TestImportEmpty(t *testing.T) {
	header := strings.Join(sacct.Fields(), "|") + "\n"
	for name, in := range map[string]string{"empty": "", "blank lines": "\n\n", "header alone": header} {
		t.Run(name, func(t *testing.T) {
			res := importString(t, openDB(t), in, history.FormatText, history.Options{Cluster: "lab"})
			if countsOf(res) != (counts{}) {
				t.Errorf("counts %+v, want none", countsOf(res))
			}
		})
	}
}

// TestImportOwnLayouts: gpuprof's own header-less text, in the current
// sacct.Format or the one before it (24 columns, no usage), both import.
func TestImportOwnLayouts(t *testing.T) {
	for _, f := range [][]string{{"real", "22.05-own-XP-epoch-noheader.txt"}, {"sacct", "22.05-XP-epoch-noheader.txt"}} {
		t.Run(f[1], func(t *testing.T) {
			res := importString(t, openDB(t), string(fixture(t, f...)), history.FormatText, history.Options{Cluster: "gpuproftest"})
			if res.Read == 0 || res.Skipped != 0 || !slices.Contains([]int{len(realJobs), 26}, res.Read) {
				t.Errorf("counts %+v (problems %v)", countsOf(res), res.Problems)
			}
		})
	}
}
