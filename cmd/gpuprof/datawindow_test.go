package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDefaultWindowOneRule (issue #38, the real test Slurm's month): with
// no window given, gpuprof plan, recommend, profiles and whatif read the
// window gpuprof report reports, the last complete month with jobs, and
// plan and the report print the same data-window line, figure and rule
// included. Before, plan planned on the data's span ("00:05:09 of data")
// while the report counted the month ("5-03:04:24"). The database holds
// jobs in the month before last too, so the data's span is not the month.
func TestDefaultWindowOneRule(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "gpuprof.db")
	now := time.Now()
	last := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.Local).AddDate(0, -1, 0)
	var b strings.Builder
	b.WriteString(oneGPUSacctHeader)
	id := 100
	for _, from := range []time.Time{last.AddDate(0, -1, 0), last} {
		for i := range 40 {
			id++
			at := from.Add(time.Hour + time.Duration(i)*12*time.Hour)
			b.WriteString(oneGPUSacctLine(id, at, at.Add(10*time.Minute)))
		}
	}
	importTrace(t, "", db, b.String())
	dataWindow := func(what, out string) string {
		t.Helper()
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "Data window: ") {
				// The CLI goes on with the jobs without an end; the
				// report's line ends with a full stop.
				l, _, _ = strings.Cut(strings.TrimSuffix(l, "."), ";")
				return l
			}
		}
		t.Errorf("%s prints no data window:\n%s", what, out)
		return ""
	}
	rdir := filepath.Join(dir, "report")
	out, err := runCLI(t, "--db", db, "report", "--out", rdir, "--format", "md")
	if err != nil {
		t.Fatalf("report: %v\n%s", err, out)
	}
	md, err := os.ReadFile(filepath.Join(rdir, "gpuprof-report-"+last.Format("2006-01")+".md"))
	if err != nil {
		t.Fatal(err)
	}
	report := dataWindow("report", string(md))
	days := last.AddDate(0, 1, 0).Sub(last).Hours() / 24
	want := fmt.Sprintf("Data window: %s to %s, %d-00:00:00 of data (no window given: the last complete month with jobs, as gpuprof report reads it)",
		last.Format("2006-01-02T15:04:05"), last.AddDate(0, 1, 0).Format("2006-01-02T15:04:05"), int(days))
	if report != want {
		t.Errorf("report's data window\n%q, want\n%q", report, want)
	}
	for _, args := range [][]string{{"plan"}, {"recommend", "--no-simulate"}, {"profiles"}} {
		out, err := runCLI(t, append([]string{"--db", db}, args...)...)
		if err != nil {
			t.Fatalf("%s: %v\n%s", args[0], err, out)
		}
		if got := dataWindow(args[0], out); got != report {
			t.Errorf("%s's data window\n%q, the report's\n%q", args[0], got, report)
		}
	}
	// The plan's own period, which plan.min_window is checked against and
	// the Little's-law rates divide by, is the month's too.
	out, err = runCLI(t, "--db", db, "plan", "--json")
	if err != nil {
		t.Fatalf("plan --json: %v\n%s", err, out)
	}
	var pj struct {
		Plan struct {
			PeriodHours float64 `json:"period_hours"`
		} `json:"plan"`
	}
	if err := json.Unmarshal([]byte(out), &pj); err != nil || pj.Plan.PeriodHours != days*24 {
		t.Errorf("plan --json's period: %v hours (%v), want the month's %v", pj.Plan.PeriodHours, err, days*24)
	}
	out, err = runCLI(t, "--db", db, "whatif", "--seeds", "1", "--node", "gpu01:4xa100:gpu")
	if err != nil {
		t.Fatalf("whatif: %v\n%s", err, out)
	}
	if want := fmt.Sprintf("What-if replay of %s to %s", last.Format("2006-01-02T15:04:05"), last.AddDate(0, 1, 0).Format("2006-01-02T15:04:05")); !strings.Contains(out, want) ||
		!strings.Contains(out, "Window: no window given: the last complete month with jobs") {
		t.Errorf("whatif without a window:\n%s\nwant %q and the rule said", out, want)
	}
}
