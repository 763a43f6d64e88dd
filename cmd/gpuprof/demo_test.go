package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDemoSpan: without --start the demo's months end where the current
// month begins (so the last is the last complete one), over a year's end
// and in a short February; --days replaces --months; bad values are usage
// errors.
func TestDemoSpan(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, c := range []struct {
		o     demoMonthOptions
		now   string
		start string
		days  int
	}{
		{demoMonthOptions{Months: 2}, "2026-12-03T11:00:00Z", "2026-10-01", 61},
		{demoMonthOptions{Months: 1}, "2026-12-03T11:00:00Z", "2026-11-01", 30},
		{demoMonthOptions{Months: 2}, "2027-01-15T00:00:00Z", "2026-11-01", 61},
		{demoMonthOptions{Months: 1}, "2027-03-01T00:00:00Z", "2027-02-01", 28},
		// Local midnight of the 1st in a zone east of UTC is still the
		// previous month in UTC.
		{demoMonthOptions{Months: 1}, "2026-12-01T00:30:00+02:00", "2026-10-01", 31},
		{demoMonthOptions{Months: 1, Days: 3}, "2026-12-03T11:00:00Z", "2026-11-01", 3},
		{demoMonthOptions{Months: 2, Start: "2026-10-01"}, "2030-01-01T00:00:00Z", "2026-10-01", 61},
	} {
		start, days, err := c.o.span(at(c.now))
		if err != nil || start.Format(time.DateOnly) != c.start || days != c.days {
			t.Errorf("%+v at %s: %s, %d days, %v; want %s, %d days", c.o, c.now, start.Format(time.DateOnly), days, err, c.start, c.days)
		}
	}
	for _, o := range []demoMonthOptions{{Months: 0}, {Months: 13}, {Months: 1, Days: -1}, {Months: 1, Start: "10/01/2026"}} {
		var u usageError
		if _, _, err := o.span(time.Now()); !errors.As(err, &u) {
			t.Errorf("%+v: %v, want a usage error", o, err)
		}
	}
}

// TestDemoTwoMonthsReport is make demo's promise: two simulated months
// ending where the current month begins, and a report without --month
// that writes the last complete one and compares it with the month
// before (its JSON's earlier months). A coarse sampling interval keeps it
// to seconds; the months are those of the real clock.
func TestDemoTwoMonthsReport(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates two months")
	}
	if os.Getuid() != 0 {
		t.Skip("the local database shows other users' jobs to root or admin_group only")
	}
	dir := t.TempDir()
	t.Setenv("GPUPROF_CONFIG", "")
	db := filepath.Join(dir, "month.db")
	run := func(args ...string) string {
		t.Helper()
		var buf bytes.Buffer
		root := newRootCommand()
		root.SetOut(&buf)
		root.SetErr(&buf)
		root.SetArgs(args)
		if err := root.Execute(); err != nil {
			t.Fatalf("gpuprof %s: %v\n%s", strings.Join(args, " "), err, buf.String())
		}
		return buf.String()
	}
	// The months are taken from the clock once, here; a test run across
	// a month's end could otherwise disagree with itself.
	now := time.Now().UTC()
	this := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
	last, before := this.AddDate(0, -1, 0).Format("2006-01"), this.AddDate(0, -2, 0).Format("2006-01")
	out := run("demo", "month", "--out", dir, "--db", db, "--months", "2", "--interval", "15m")
	if !strings.Contains(out, "demo month: 4 nodes") || !strings.Contains(out, this.AddDate(0, -2, 0).Format(time.DateOnly)+" to ") {
		t.Fatalf("demo month output %q, want two months from %s-01", out, before)
	}
	out = run("report", "--db", db, "--out", filepath.Join(dir, "report"), "--format", "json")
	if !strings.Contains(out, "reporting "+last) {
		t.Errorf("report output %q, want it to say it reports %s", out, last)
	}
	b, err := os.ReadFile(filepath.Join(dir, "report", "gpuprof-report-"+last+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Month   string `json:"month"`
		Earlier []struct {
			Month    string         `json:"month"`
			Headline map[string]any `json:"headline"`
		} `json:"earlier"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Month != last || len(rep.Earlier) != 1 || rep.Earlier[0].Month != before || len(rep.Earlier[0].Headline) == 0 {
		t.Errorf("report of %s with earlier months %+v; want %s compared with %s", rep.Month, rep.Earlier, last, before)
	}
}
