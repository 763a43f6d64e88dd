package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/cliview"
	"github.com/gpuprof/gpuprof/history"
	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/store"
)

// slurmIDDB writes a database holding what a real Slurm 22.05 reported
// (slurmext/testdata/sacct/22.05-P-steps-iso.txt: array 6 with tasks 6_1,
// 6_2 and 6_3 at raw ids 10, 11 and 6, heterogeneous job 12 at 12 and 13)
// as an sacct import, and a GPU profile of task 6_1, which knows only its
// raw id 10.
func slurmIDDB(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "gpuprof.db")
	db, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	f, err := os.Open(filepath.Join("..", "..", "slurmext", "testdata", "sacct", "22.05-P-steps-iso.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// The import path itself: the file's header names its columns.
	if _, err := history.Import(ctx, db, f, history.FormatText, history.Options{}); err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 12, 2, 11, 26, 40, 0, time.UTC)
	p := profile.Job{Key: profile.Key{Cluster: "gpuproftest", JobID: "10", Node: "localhost"}, User: "root", UID: 0,
		Start: start, End: start.Add(time.Minute), Status: profile.StatusFinished, Source: profile.SourceAgent}
	if err := db.PutJob(ctx, p); err != nil {
		t.Fatal(err)
	}
	return path
}

// runCommand runs gpuprof with args against the database at path (the
// test owns it, so it reads every job) and returns its output and the
// exit code main would give.
func runCommand(t *testing.T, path string, args ...string) (string, int, error) {
	t.Helper()
	t.Setenv("GPUPROF_CONFIG", "")
	var buf bytes.Buffer
	root := newRootCommand()
	root.SetOut(&buf)
	root.SetErr(io.Discard)
	root.SetArgs(append(args, "--db", path))
	err := root.Execute()
	return buf.String(), exitCode(err), err
}

func TestShowSlurmJobIDs(t *testing.T) {
	path := slurmIDDB(t)
	tests := []struct {
		name    string
		id      string
		heads   []string // the "Job …" lines, in order
		first   string   // the line above several jobs
		profile bool     // the first job comes with its GPU profile
	}{
		{name: "array task", id: "6_1", heads: []string{"Job 6_1 (raw id 10, cluster gpuproftest)"}, profile: true},
		{name: "raw id of that task", id: "10", heads: []string{"Job 6_1 (raw id 10, cluster gpuproftest)"}, profile: true},
		{name: "task whose raw id is the array's", id: "6_3", heads: []string{"Job 6_3 (raw id 6, cluster gpuproftest)"}},
		{name: "array job: every task, in task order", id: "6", first: "6 names 3 jobs: 6_1, 6_2, 6_3",
			heads: []string{"Job 6_1 (raw id 10, cluster gpuproftest)", "Job 6_2 (raw id 11, cluster gpuproftest)", "Job 6_3 (raw id 6, cluster gpuproftest)"}, profile: true},
		{name: "het component", id: "12+1", heads: []string{"Job 12+1 (raw id 13, cluster gpuproftest)"}},
		{name: "het job", id: "12", first: "12 names 2 jobs: 12+0, 12+1",
			heads: []string{"Job 12+0 (raw id 12, cluster gpuproftest)", "Job 12+1 (raw id 13, cluster gpuproftest)"}},
		{name: "plain job", id: "1", heads: []string{"Job 1 (cluster gpuproftest)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, code, err := runCommand(t, path, "show", tt.id)
			if err != nil {
				t.Fatalf("show %s: exit %d: %v", tt.id, code, err)
			}
			var heads []string
			for line := range strings.SplitSeq(out, "\n") {
				if strings.HasPrefix(line, "Job ") {
					heads = append(heads, line)
				}
			}
			if strings.Join(heads, "\n") != strings.Join(tt.heads, "\n") {
				t.Errorf("show %s headings:\n%s\nwant\n%s", tt.id, strings.Join(heads, "\n"), strings.Join(tt.heads, "\n"))
			}
			if first, _, _ := strings.Cut(out, "\n"); tt.first != "" && first != tt.first {
				t.Errorf("show %s first line %q, want %q", tt.id, first, tt.first)
			}
			if got := strings.Contains(out, "  Node localhost: profile ") && strings.Contains(out, ", raw id 10, "); got != tt.profile {
				t.Errorf("show %s: profile of raw id 10 shown %v, want %v:\n%s", tt.id, got, tt.profile, out)
			}

			js, _, err := runCommand(t, path, "show", tt.id, "--json")
			if err != nil {
				t.Fatal(err)
			}
			var vs []cliview.JobJSON
			if err := json.Unmarshal([]byte(js), &vs); err != nil {
				t.Fatal(err)
			}
			if len(vs) != len(tt.heads) {
				t.Fatalf("show %s --json: %d jobs, want %d", tt.id, len(vs), len(tt.heads))
			}
			for i, v := range vs {
				if !strings.HasPrefix(tt.heads[i], "Job "+v.DisplayID+" ") || !strings.Contains(tt.heads[i], "raw id "+v.JobID+",") && v.DisplayID != v.JobID {
					t.Errorf("show %s --json [%d]: display_id %q job_id %q, want those of %q", tt.id, i, v.DisplayID, v.JobID, tt.heads[i])
				}
			}
		})
	}
}

func TestShowRefusesWhatIsNoJobID(t *testing.T) {
	path := slurmIDDB(t)
	tests := []struct {
		id   string
		code int
		says string
	}{
		{id: "abc", code: exitUsage, says: `"abc" is not a job id`},
		{id: "6_1.batch", code: exitUsage, says: "is a job step"},
		{id: "6_", code: exitUsage, says: "not a job id"},
		{id: "6_9", code: exitError, says: "job 6_9: not found (array and heterogeneous job ids come from a jobcomp record or an sacct import"},
		{id: "12+5", code: exitError, says: "job 12+5: not found"},
		{id: "4242", code: exitError, says: "job 4242: not found"},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			out, code, err := runCommand(t, path, "show", tt.id)
			if code != tt.code || err == nil || !strings.Contains(err.Error(), tt.says) {
				t.Errorf("show %s: exit %d, %v; want exit %d saying %q", tt.id, code, err, tt.code, tt.says)
			}
			if out != "" {
				t.Errorf("show %s printed %q", tt.id, out)
			}
			if code == exitError && !errors.Is(err, store.ErrNotFound) {
				t.Errorf("show %s: %v, want ErrNotFound", tt.id, err)
			}
		})
	}
}

// jobs prints each job's Slurm id, and --text finds them by it.
func TestJobsPrintSlurmIDs(t *testing.T) {
	path := slurmIDDB(t)
	firstColumn := func(out string) []string {
		var ids []string
		for i, line := range strings.Split(strings.TrimSpace(out), "\n") {
			if i > 0 {
				ids = append(ids, strings.Fields(line)[0])
			}
		}
		return ids
	}
	tests := []struct {
		args []string
		want []string
	}{
		{args: []string{"--text", "6_", "--sort", "id"}, want: []string{"6_3", "6_1", "6_2"}}, // by raw id: 6, 10, 11
		{args: []string{"--text", "12+", "--sort", "id"}, want: []string{"12+0", "12+1"}},
		{args: []string{"--text", "7_5"}, want: []string{"7_5"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			out, _, err := runCommand(t, path, append([]string{"jobs"}, tt.args...)...)
			if err != nil {
				t.Fatal(err)
			}
			if got := firstColumn(out); strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Errorf("jobs %v: ids %v, want %v\n%s", tt.args, got, tt.want, out)
			}
		})
	}
	// Every id the table prints is one show accepts and finds.
	out, _, err := runCommand(t, path, "jobs")
	if err != nil {
		t.Fatal(err)
	}
	ids := firstColumn(out)
	if len(ids) < 20 {
		t.Fatalf("jobs lists %d jobs, want the fixture's", len(ids))
	}
	slurmForm := regexp.MustCompile(`^[0-9]+([_+][0-9]+|_\[[0-9,%:-]+\])?$`)
	for _, id := range ids {
		if !slurmForm.MatchString(id) {
			t.Errorf("jobs prints %q, not an id as Slurm prints one", id)
			continue
		}
		if _, code, err := runCommand(t, path, "show", id); err != nil {
			t.Errorf("show %s (as jobs printed it): exit %d, %v", id, code, err)
		}
	}
}
