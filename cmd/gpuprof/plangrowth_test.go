package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestPlanGrowthFromDatabase: four whole months of a cluster's jobs,
// imported from sacct text, whose GPU-hours a day grow 10 % a month:
// gpuprof plan of the last month and gpuprof report of it estimate the
// same growth from the same months (about 214 % a year) and say so;
// --growth wins over the trend and says so (issue #36).
func TestPlanGrowthFromDatabase(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "gpuprof.db")
	var b strings.Builder
	b.WriteString(oneGPUSacctHeader)
	id := 100
	for k := range 4 {
		from := time.Date(2026, time.Month(7+k), 1, 0, 0, 0, 0, time.UTC)
		days := from.AddDate(0, 1, 0).Sub(from).Hours() / 24
		n := int(math.Round(4 * days * math.Pow(1.1, float64(k))))
		for i := range n {
			id++
			at := from.Add(time.Hour + time.Duration(i)*(time.Duration(days)*24*time.Hour-3*time.Hour)/time.Duration(n))
			b.WriteString(oneGPUSacctLine(id, at, at))
		}
	}
	importTrace(t, "", db, b.String())
	type estimate struct {
		Source string  `json:"source"`
		Reason string  `json:"reason"`
		Usable bool    `json:"usable"`
		Used   float64 `json:"used"`
		Low    float64 `json:"low"`
		High   float64 `json:"high"`
		Months []struct {
			Month string `json:"month"`
		} `json:"months"`
		Text string `json:"text"`
	}
	plan := func(args ...string) estimate {
		t.Helper()
		out, err := runCLI(t, append([]string{"--db", db, "plan", "--json", "--since", "2026-10-01", "--until", "2026-11-01"}, args...)...)
		if err != nil {
			t.Fatalf("plan: %v\n%s", err, out)
		}
		var p struct {
			Simulated struct {
				Growth         float64   `json:"growth"`
				GrowthEstimate *estimate `json:"growth_estimate"`
			} `json:"simulated"`
		}
		if err := json.Unmarshal([]byte(out), &p); err != nil || p.Simulated.GrowthEstimate == nil || p.Simulated.Growth != p.Simulated.GrowthEstimate.Used {
			t.Fatalf("plan JSON: %v, %+v", err, p.Simulated)
		}
		return *p.Simulated.GrowthEstimate
	}
	p := plan()
	want := math.Pow(1.1, 12) - 1
	if p.Source != "history" || p.Reason != "trend" || !p.Usable || math.Abs(p.Used-want) > 0.1 || p.Low > want || p.High < want || len(p.Months) != 4 || p.Months[0].Month != "2026-07" {
		t.Errorf("plan's growth %+v, want the trend %.2f of 2026-07 to 2026-10", p, want)
	}
	rdir := filepath.Join(dir, "report")
	if out, err := runCLI(t, "--db", db, "report", "--month", "2026-10", "--out", rdir, "--format", "json"); err != nil {
		t.Fatalf("report: %v\n%s", err, out)
	}
	data, err := os.ReadFile(filepath.Join(rdir, "gpuprof-report-2026-10.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), jsonText(t, p.Text)) {
		t.Errorf("the report does not say the plan's growth %q", p.Text)
	}
	if c := plan("--growth", "5%"); c.Source != "configured" || c.Reason != "set" || c.Used != 0.05 || !strings.Contains(c.Text, "as configured") || !strings.Contains(c.Text, "site's own trend is") {
		t.Errorf("--growth 5%%: %+v", c)
	}
}

// jsonText is s as a JSON string's contents (without the quotes).
func jsonText(t *testing.T, s string) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b[1 : len(b)-1])
}

// oneGPUSacctHeader and oneGPUSacctLine write sacct text of one-GPU
// jobs of user ann on gpu01 of cluster lab: submitted (and eligible) at
// submit, started at start, run 2 h of a 4 h limit.
const oneGPUSacctHeader = "JobID|JobIDRaw|JobName|User|Account|Partition|QOS|Submit|Eligible|Start|End|Elapsed|Timelimit|State|ExitCode|NodeList|ReqTRES|AllocTRES|Cluster\n"

func oneGPUSacctLine(id int, submit, start time.Time) string {
	ts := func(t time.Time) string { return t.Format("2006-01-02T15:04:05") }
	return fmt.Sprintf("%d|%d|train|ann|bio|gpu|normal|%s|%s|%s|%s|02:00:00|04:00:00|COMPLETED|0:0|gpu01|billing=1,cpu=1,gres/gpu=1,node=1|billing=1,cpu=1,gres/gpu=1,node=1|lab\n",
		id, id, ts(submit), ts(submit), ts(start), ts(start.Add(2*time.Hour)))
}
