package history_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gpuprof/gpuprof/history"
	"github.com/gpuprof/gpuprof/slurmext/sacct"
	"github.com/gpuprof/gpuprof/store"
)

// plantedWaits is the real capture 22.05-own-XP-epoch-noheader.txt
// (gpuprof's own columns, no header) with Submit and Eligible moved back
// by wait seconds (its jobs started the second they were submitted); with
// swap, the Submit and Start columns change places, as in text written
// with another --format and read without a header.
func plantedWaits(t *testing.T, wait int64, swap bool) string {
	t.Helper()
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(string(fixture(t, "real", "22.05-own-XP-epoch-noheader.txt"))), "\n") {
		f := strings.Split(line, "|")
		sub := 8 + len(f) - 26 // job 8's name holds a '|'
		for _, i := range []int{sub, sub + 1} {
			v, err := strconv.ParseInt(f[i], 10, 64)
			if err != nil {
				t.Fatal(err)
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

// A header-less file with Submit and Start swapped is refused, and
// re-importing it over the right jobs changes nothing (no wait of 0, no
// requeue).
func TestImportSwappedSubmitStart(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	o := history.Options{Cluster: "gpuproftest"}
	res := importString(t, db, plantedWaits(t, 3600, false), history.FormatText, o)
	if res.Inserted != 12 || res.Skipped != 0 {
		t.Fatalf("right order: %+v", countsOf(res))
	}
	res, err := history.Import(ctx, db, strings.NewReader(plantedWaits(t, 3600, true)), history.FormatText, o)
	if !errors.Is(err, sacct.ErrLayout) || !strings.Contains(err.Error(), "Start before Submit") {
		t.Fatalf("swapped: %v, want refused for Start before Submit", err)
	}
	if res.Read != 0 || res.Updated != 0 {
		t.Errorf("swapped: %+v, want nothing read", countsOf(res))
	}
	for _, id := range []string{"1", "7", "12"} {
		r, err := db.GetSchedJob(ctx, "gpuproftest", id)
		if err != nil {
			t.Fatal(err)
		}
		if w := r.Start.Sub(r.Submit); w.Seconds() != 3600 || r.Restarts != 0 {
			t.Errorf("job %s: wait %v, %d restarts; want 1h, 0", id, w, r.Restarts)
		}
	}
}

// A job whose End is before its Start is refused, counted and named; the
// others are imported.
func TestImportTimeOrderCounted(t *testing.T) {
	ls := strings.Split(plantedWaits(t, 0, false), "\n")
	for i, l := range ls {
		if strings.HasPrefix(l, "6|") {
			f := strings.Split(l, "|")
			f[11] = strconv.Itoa(1796238266 - 3*3600)
			ls[i] = strings.Join(f, "|")
		}
	}
	db := openDB(t)
	res := importString(t, db, strings.Join(ls, "\n"), history.FormatText, history.Options{Cluster: "gpuproftest"})
	if res.Inserted != 11 || res.Skipped != 1 || res.TimeOrder != 1 || !slices.Equal(res.TimeOrderIDs, []string{"6"}) {
		t.Fatalf("counts %+v, time order %d %v; want 11 in, job 6 refused", countsOf(res), res.TimeOrder, res.TimeOrderIDs)
	}
	if _, err := db.GetSchedJob(context.Background(), "gpuproftest", "6"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("job 6 stored: %v", err)
	}
}

// The real capture 22.05-XP-epoch-noheader.txt (24 columns, Cluster last)
// cut inside its last field: the last job is not imported as a job of
// cluster "gpupr", and the import names it.
func TestImportCutLastLine(t *testing.T) {
	ctx := context.Background()
	whole := strings.TrimRight(string(fixture(t, "sacct", "22.05-XP-epoch-noheader.txt")), "\n")
	cut := strings.TrimSuffix(whole, "gpuproftest") + "gpupr"
	lastID, _, _ := strings.Cut(whole[strings.LastIndex(whole, "\n")+1:], "|")
	db := openDB(t)
	res := importString(t, db, cut, history.FormatText, history.Options{Cluster: "default"})
	if res.Read != 25 || res.Skipped != 1 || res.CutLines != 1 || !slices.Equal(res.CutIDs, []string{lastID}) {
		t.Fatalf("counts %+v, cut %d %v; want 25 read, job %s refused as cut", countsOf(res), res.CutLines, res.CutIDs, lastID)
	}
	if _, ok := res.Clusters["gpupr"]; ok || !errors.Is(res.Problems[0], history.ErrCutLine) {
		t.Errorf("clusters %v, problems %v", res.Clusters, res.Problems)
	}
	if _, err := db.GetSchedJob(ctx, "gpupr", lastID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("job %s of cluster gpupr: %v", lastID, err)
	}
	// Cut at the separator: the last job names no cluster while every
	// other names one.
	res = importString(t, openDB(t), strings.TrimSuffix(whole, "gpuproftest"), history.FormatText, history.Options{Cluster: "default"})
	if res.CutLines != 1 || res.Clusters["default"] != 0 {
		t.Errorf("cut at '|': cut %d, clusters %v", res.CutLines, res.Clusters)
	}
	// The whole file: nothing refused.
	res = importString(t, openDB(t), whole, history.FormatText, history.Options{Cluster: "default"})
	if res.Read != 26 || res.CutLines != 0 {
		t.Errorf("whole: %+v, cut %d", countsOf(res), res.CutLines)
	}
}
