package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/store"
)

// reportJob is one job written to a test database for the report
// command: the scheduler's record always, the agent's profile unless
// sacctOnly.
type reportJob struct {
	id                  string
	user, account, name string
	start               time.Time
	run                 time.Duration
	wait                time.Duration
	util                float64 // percent
	state               string  // default COMPLETED
	sacctOnly           bool
	gpus                int              // default 1
	node                string           // default gpu01
	energyKWh           float64          // per GPU; 0: no energy reading
	notices             []profile.Notice // saved with the profile
}

// reportDB writes jobs to a new database and returns its path.
func reportDB(t *testing.T, jobs ...reportJob) string {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "gpuprof.db")
	db, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	uid := os.Getuid()
	for _, j := range jobs {
		if j.state == "" {
			j.state = "COMPLETED"
		}
		if j.gpus == 0 {
			j.gpus = 1
		}
		if j.node == "" {
			j.node = "gpu01"
		}
		end := j.start.Add(j.run)
		if !j.sacctOnly {
			var gs []profile.GPU
			for k := range j.gpus {
				hist := make([]uint32, 101)
				hist[int(j.util)] = 60
				gs = append(gs, profile.GPU{
					UUID: fmt.Sprintf("GPU-%s-%d", j.node, k), SlurmIndex: k, Minor: k,
					Model: testH100, MemoryTotal: 80 << 30,
					Samples: 60, UtilSum: uint64(j.util) * 60, UtilMax: uint32(j.util), UtilHist: hist,
					MemSamples: 60, MemPeak: 20 << 30, MemActive: 60, ProcSamples: 60,
					FirstSample: j.start, LastSample: end,
					EnergyJ: j.energyKWh * 3.6e6, EnergyValid: j.energyKWh > 0,
				})
			}
			p := profile.Job{
				Key:  profile.Key{Cluster: "c1", JobID: j.id, Node: j.node},
				User: j.user, UID: uid, Account: j.account, Partition: "gpu",
				Start: j.start, End: end, Status: profile.StatusFinished, Source: profile.SourceAgent,
				ExitKnown: true, SampleInterval: time.Minute, LastSample: end,
				GPUs: gs, Notices: j.notices,
			}
			if err := db.PutJob(ctx, p); err != nil {
				t.Fatalf("PutJob %s: %v", j.id, err)
			}
		}
		r := slurmext.JobRecord{
			Cluster: "c1", JobID: j.id, DisplayID: j.id, ArrayTaskID: -1, HetOffset: -1,
			Name: j.name, User: j.user, UID: uid, Account: j.account, Partition: "gpu",
			State: slurmext.JobState(j.state), CancelledBy: -1,
			Submit: j.start.Add(-j.wait), Eligible: j.start.Add(-j.wait), Start: j.start, End: end,
			TimeLimit: 2 * j.run, ReqGPUs: j.gpus, ReqTRES: fmt.Sprintf("gres/gpu=%d", j.gpus),
		}
		if err := db.PutSchedJob(ctx, r); err != nil {
			t.Fatalf("PutSchedJob %s: %v", j.id, err)
		}
	}
	return path
}

// monthJobs is n jobs of users spread over the days of the month that
// starts at first, round-robin over users and accounts.
func monthJobs(first time.Time, idBase, n int, users, accounts []string, name string) []reportJob {
	var out []reportJob
	for i := range n {
		out = append(out, reportJob{
			id: fmt.Sprint(idBase + i), user: users[i%len(users)], account: accounts[i%len(accounts)], name: name,
			start: first.Add(time.Duration(24+i*20) * time.Hour), run: 3 * time.Hour, util: float64(20 + 10*(i%7)),
			node: fmt.Sprintf("gpu%02d", 1+i%2), wait: time.Duration(1+i%5) * 10 * time.Minute,
		})
	}
	return out
}

var (
	oct2026 = time.Date(2026, 10, 1, 0, 0, 0, 0, time.Local)
	sep2026 = time.Date(2026, 9, 1, 0, 0, 0, 0, time.Local)
)

// reportFiles reads the files the report command wrote to dir, by
// extension, and fails if dir holds anything else.
func reportFiles(t *testing.T, dir, month string, want ...string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	var wantNames []string
	for _, f := range want {
		wantNames = append(wantNames, "gpuprof-report-"+month+"."+f)
	}
	slices.Sort(wantNames)
	if !slices.Equal(names, wantNames) {
		t.Fatalf("%s holds %q, want exactly %q (no temporary files)", dir, names, wantNames)
	}
	out := map[string]string{}
	for _, f := range want {
		path := filepath.Join(dir, "gpuprof-report-"+month+"."+f)
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o644 {
			t.Errorf("%s mode %v, want 0644", path, st.Mode().Perm())
		}
		out[f] = string(b)
	}
	return out
}

// reportJSON is the part of the JSON report the command tests read.
type reportJSON struct {
	Schema     string   `json:"schema"`
	Month      string   `json:"month"`
	Title      string   `json:"title"`
	Anonymized bool     `json:"anonymized"`
	Missing    []string `json:"missing"`
	Sources    struct {
		Database string `json:"database"`
		Jobs     int    `json:"jobs"`
		GPUJobs  int    `json:"gpu_jobs"`
	} `json:"sources"`
	Workload struct {
		Headline struct {
			Jobs              int     `json:"jobs"`
			AllocatedGPUHours float64 `json:"allocated_gpu_hours"`
		} `json:"headline"`
		Users []struct {
			Name string `json:"name"`
		} `json:"users"`
	} `json:"workload"`
	Earlier []struct {
		Month    string `json:"month"`
		Headline struct {
			Jobs              int     `json:"jobs"`
			AllocatedGPUHours float64 `json:"allocated_gpu_hours"`
		} `json:"headline"`
	} `json:"earlier"`
}

func decodeReport(t *testing.T, js string) reportJSON {
	t.Helper()
	var r reportJSON
	if err := json.Unmarshal([]byte(js), &r); err != nil {
		t.Fatalf("JSON report: %v\n%.2000s", err, js)
	}
	return r
}

func TestReportCommandWritesThreeFiles(t *testing.T) {
	jobs := monthJobs(oct2026, 2000, 12, []string{"ann", "bob"}, []string{"ml"}, "train")
	jobs = append(jobs, monthJobs(sep2026, 1000, 5, []string{"ann"}, []string{"ml"}, "train")...)
	db := reportDB(t, jobs...)
	dir := filepath.Join(t.TempDir(), "reports") // created by the command

	out, err := runCLI(t, "report", "--db", db, "--month", "2026-10", "--out", dir)
	if err != nil {
		t.Fatalf("report: %v", err)
	}
	base := filepath.Join(dir, "gpuprof-report-2026-10")
	if want := base + ".html\n" + base + ".md\n" + base + ".json\n"; out != want {
		t.Errorf("stdout %q, want the three paths %q", out, want)
	}
	files := reportFiles(t, dir, "2026-10", "html", "md", "json")
	r := decodeReport(t, files["json"])
	if r.Schema != "gpuprof.report/v2" || r.Month != "2026-10" || r.Title != "GPU workload report, October 2026" {
		t.Errorf("schema %q month %q title %q", r.Schema, r.Month, r.Title)
	}
	if r.Workload.Headline.Jobs != 12 || r.Sources.GPUJobs != 12 {
		t.Errorf("month jobs %d (GPU %d), want the 12 October jobs", r.Workload.Headline.Jobs, r.Sources.GPUJobs)
	}
	// 12 one-GPU jobs of 3 h, all inside October.
	if h := r.Workload.Headline.AllocatedGPUHours; h < 36-1e-9 || h > 36+1e-9 {
		t.Errorf("allocated %v GPU-hours, want 36", h)
	}
	if r.Sources.Database != db {
		t.Errorf("sources.database %q, want %q", r.Sources.Database, db)
	}
	if len(r.Earlier) != 1 || r.Earlier[0].Month != "2026-09" || r.Earlier[0].Headline.Jobs != 5 {
		t.Errorf("earlier = %+v, want 2026-09 with 5 jobs", r.Earlier)
	}
	if !strings.Contains(files["md"], "# GPU workload report, October 2026\n") ||
		!strings.Contains(files["md"], "| 2026-09 | 5 |") {
		t.Errorf("Markdown lacks the title or September's row:\n%.3000s", files["md"])
	}
	if !strings.HasPrefix(files["html"], "<!DOCTYPE html>") {
		t.Errorf("HTML starts %.80q", files["html"])
	}

	// Writing again replaces the files and leaves nothing else behind.
	if _, err := runCLI(t, "report", "--db", db, "--month", "2026-10", "--out", dir); err != nil {
		t.Fatalf("second report: %v", err)
	}
	reportFiles(t, dir, "2026-10", "html", "md", "json")
}

func TestReportCommandFormatsAndUsage(t *testing.T) {
	db := reportDB(t, monthJobs(oct2026, 2000, 3, []string{"ann"}, []string{"ml"}, "train")...)

	dir := t.TempDir()
	out, err := runCLI(t, "report", "--db", db, "--month", "2026-10", "--out", dir, "--format", "md")
	if err != nil {
		t.Fatalf("report --format md: %v", err)
	}
	if want := filepath.Join(dir, "gpuprof-report-2026-10.md") + "\n"; out != want {
		t.Errorf("stdout %q, want %q", out, want)
	}
	reportFiles(t, dir, "2026-10", "md")

	dir = t.TempDir()
	if _, err := runCLI(t, "report", "--db", db, "--month", "2026-10", "--out", dir, "--format", "json,markdown,JSON"); err != nil {
		t.Fatalf("report --format json,markdown: %v", err)
	}
	reportFiles(t, dir, "2026-10", "json", "md")

	for _, tt := range []struct {
		name string
		args []string
	}{
		{"unknown format", []string{"--format", "pdf"}},
		{"empty format", []string{"--format", ""}},
		{"month 13", []string{"--month", "2026-13"}},
		{"month name", []string{"--month", "nov"}},
		{"month with day", []string{"--month", "2026-10-01"}},
		{"top 0", []string{"--top", "0"}},
		{"negative compare", []string{"--compare", "-1"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			args := append([]string{"report", "--db", db, "--out", dir}, tt.args...)
			_, err := runCLI(t, args...)
			if code := exitCode(err); code != exitUsage {
				t.Errorf("%q: exit code %d (%v), want %d (usage)", tt.args, code, err, exitUsage)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("%q: a usage error wrote %d files", tt.args, len(entries))
			}
		})
	}
}

func TestReportCommandEmptyMonth(t *testing.T) {
	db := reportDB(t, monthJobs(sep2026, 1000, 3, []string{"ann"}, []string{"ml"}, "train")...)
	dir := t.TempDir()
	if _, err := runCLI(t, "report", "--db", db, "--month", "2026-11", "--out", dir); err != nil {
		t.Fatalf("report of an empty month: %v", err)
	}
	files := reportFiles(t, dir, "2026-11", "html", "md", "json")
	for _, f := range []string{"html", "md"} {
		if !strings.Contains(files[f], "No jobs ran or waited in this month") {
			t.Errorf("%s does not say the month had no jobs:\n%.2000s", f, files[f])
		}
	}
	r := decodeReport(t, files["json"])
	if !slices.Contains(r.Missing, "no_jobs") || r.Workload.Headline.Jobs != 0 {
		t.Errorf("JSON missing %q, jobs %d; want no_jobs and 0", r.Missing, r.Workload.Headline.Jobs)
	}
	// September, two months back, is still compared.
	if len(r.Earlier) != 1 || r.Earlier[0].Month != "2026-09" {
		t.Errorf("earlier = %+v, want September", r.Earlier)
	}
}

// TestReportCommandLastMonthWithJobs: without --month the report is of the
// last complete month that has jobs (two months before now's here:
// nothing since), not an empty report of the month before now; a database
// with no complete month of jobs is an error that says so, and nothing is
// written.
func TestReportCommandLastMonthWithJobs(t *testing.T) {
	n := time.Now()
	first := time.Date(n.Year(), n.Month(), 1, 0, 0, 0, 0, time.Local).AddDate(0, -2, 0)
	month := first.Format("2006-01")
	db := reportDB(t, monthJobs(first, 1000, 3, []string{"ann"}, []string{"ml"}, "train")...)
	dir := t.TempDir()
	out, err := runCLI(t, "report", "--db", db, "--out", dir)
	if err != nil {
		t.Fatalf("report without --month: %v\n%s", err, out)
	}
	if !strings.Contains(out, "No --month: reporting "+month+", the last complete month with jobs.") {
		t.Errorf("output does not say %s:\n%s", month, out)
	}
	files := reportFiles(t, dir, month, "html", "md", "json")
	if r := decodeReport(t, files["json"]); r.Workload.Headline.Jobs != 3 {
		t.Errorf("report of %d jobs, want %s's 3", r.Workload.Headline.Jobs, month)
	}

	empty := reportDB(t)
	dir = t.TempDir()
	_, err = runCLI(t, "report", "--db", empty, "--out", dir)
	if err == nil || !strings.Contains(err.Error(), "nothing to report (choose a month with --month") {
		t.Errorf("report of a database without jobs: %v, want the no-month error", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("files written for no month: %v", ents)
	}
}

func TestReportCommandSacctOnlyMonth(t *testing.T) {
	var jobs []reportJob
	for _, j := range monthJobs(oct2026, 3000, 6, []string{"dan"}, []string{"chem"}, "md_sim") {
		j.sacctOnly = true
		j.gpus = 2
		jobs = append(jobs, j)
	}
	db := reportDB(t, jobs...)
	dir := t.TempDir()
	if _, err := runCLI(t, "report", "--db", db, "--month", "2026-10", "--out", dir); err != nil {
		t.Fatalf("report: %v", err)
	}
	files := reportFiles(t, dir, "2026-10", "html", "md", "json")
	const say = "No GPU readings for this month: only the scheduler's history (sacct) is available"
	for _, f := range []string{"html", "md"} {
		text := strings.ReplaceAll(files[f], "&#39;", "'")
		if !strings.Contains(text, say) {
			t.Errorf("%s does not say there is no GPU data:\n%.3000s", f, files[f])
		}
	}
	r := decodeReport(t, files["json"])
	if !slices.Contains(r.Missing, "no_gpu_data") {
		t.Errorf("JSON missing = %q, want no_gpu_data", r.Missing)
	}
	// 6 jobs × 2 GPUs × 3 h, known from sacct alone.
	if h := r.Workload.Headline.AllocatedGPUHours; h < 36-1e-9 || h > 36+1e-9 {
		t.Errorf("allocated %v GPU-hours, want 36 from the scheduler's records", h)
	}
}

func TestReportCommandAnonymize(t *testing.T) {
	octUsers := []string{"zelda", "quentin", "ophelia"}
	octAccounts := []string{"astrophys", "genomics"}
	sepUsers := []string{"mortimer"} // only in September
	sepAccounts := []string{"paleontology"}
	jobs := monthJobs(oct2026, 2000, 9, octUsers, octAccounts, "train")
	jobs = append(jobs, monthJobs(sep2026, 1000, 4, sepUsers, sepAccounts, "fit")...)
	// September's user also has a job that runs into October.
	jobs = append(jobs, reportJob{id: "1999", user: "mortimer", account: "paleontology", name: "fit",
		start: oct2026.Add(-2 * time.Hour), run: 5 * time.Hour, util: 50})
	db := reportDB(t, jobs...)

	// Without --anonymize every name is in the report, so the check below
	// can fail.
	plain := t.TempDir()
	if _, err := runCLI(t, "report", "--db", db, "--month", "2026-10", "--out", plain, "--format", "md"); err != nil {
		t.Fatalf("report: %v", err)
	}
	md := reportFiles(t, plain, "2026-10", "md")["md"]
	for _, name := range slices.Concat(octUsers, octAccounts, sepUsers, sepAccounts) {
		if !strings.Contains(md, name) {
			t.Errorf("setup: the plain report does not name %q", name)
		}
	}

	dir := t.TempDir()
	if _, err := runCLI(t, "report", "--db", db, "--month", "2026-10", "--out", dir, "--anonymize", "--top", "2"); err != nil {
		t.Fatalf("report --anonymize: %v", err)
	}
	files := reportFiles(t, dir, "2026-10", "html", "md", "json")
	for f, text := range files {
		lower := strings.ToLower(text)
		for _, name := range slices.Concat(octUsers, octAccounts, sepUsers, sepAccounts) {
			if strings.Contains(lower, name) {
				i := strings.Index(lower, name)
				t.Errorf("%s names %q: …%s…", f, name, text[max(0, i-80):min(len(text), i+80)])
			}
		}
		for _, want := range []string{"user-01", "user-02", "account-01"} {
			if !strings.Contains(text, want) {
				t.Errorf("%s lacks %q", f, want)
			}
		}
		if regexp.MustCompile(`user-0[5-9]`).MatchString(text) {
			t.Errorf("%s numbers more users than the 4 in the data", f)
		}
	}
	r := decodeReport(t, files["json"])
	if !r.Anonymized {
		t.Error(`JSON "anonymized" is false`)
	}
	userRe := regexp.MustCompile(`^user-\d\d$`)
	for _, u := range r.Workload.Users {
		if !userRe.MatchString(u.Name) {
			t.Errorf("workload user %q, want user-NN", u.Name)
		}
	}
	if len(r.Workload.Users) != 2 {
		t.Errorf("%d users listed, want --top 2", len(r.Workload.Users))
	}
}

func TestReportCommandHostileNames(t *testing.T) {
	long := strings.Repeat("x", 2000)
	jobs := monthJobs(oct2026, 2000, 6, []string{"ann\x1b[31mred", "<script>alert(1)</script>", long},
		[]string{"acct\x1b]0;title\x07", "<img src=x onerror=alert(2)>"}, "<script>alert(1)</script>\x1b[31m")
	jobs[0].name = "\x1b[2J\x1b[31m" + long
	jobs = append(jobs, monthJobs(sep2026, 1000, 2, []string{"<script>x</script>"}, []string{"\x1b[1mbold"}, "\x9b31m")...)
	db := reportDB(t, jobs...)
	// The database keeps the names as given: sanitising is the report's job.
	sdb, err := store.Open(context.Background(), db, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	views, err := sdb.ReaderFor(store.System).ListViews(context.Background(), store.ViewFilter{})
	sdb.Close()
	if err != nil {
		t.Fatal(err)
	}
	raw := false
	for _, v := range views {
		raw = raw || v.Sched != nil && strings.ContainsRune(v.Sched.User, 0x1b)
	}
	if !raw {
		t.Fatal("setup: the store dropped the escape from the user name")
	}

	dir := t.TempDir()
	if _, err := runCLI(t, "report", "--db", db, "--month", "2026-10", "--out", dir, "--title", "<script>alert(3)</script>\x1b[31m"); err != nil {
		t.Fatalf("report: %v", err)
	}
	files := reportFiles(t, dir, "2026-10", "html", "md", "json")
	if i := strings.Index(strings.ToLower(files["html"]), "<script"); i >= 0 {
		t.Errorf("HTML holds a script tag: …%s…", files["html"][max(0, i-80):min(len(files["html"]), i+80)])
	}
	if !strings.Contains(files["html"], "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Error("HTML does not show the <script> user escaped")
	}
	if strings.Contains(strings.ToLower(files["html"]), "<img") {
		t.Error("HTML holds an img tag from a name")
	}
	for f, text := range files {
		if strings.ContainsRune(text, 0x1b) || strings.ContainsRune(text, 0x9b) || strings.ContainsRune(text, 0x07) {
			t.Errorf("%s holds an escape or control character", f)
		}
	}
	if strings.Contains(files["md"], "<script>") {
		t.Error("Markdown holds an unescaped <script>")
	}
	// The JSON keeps the names (sanitised) as data: the 2000-character
	// user is still there in full.
	r := decodeReport(t, files["json"])
	found := false
	for _, u := range r.Workload.Users {
		found = found || u.Name == long
	}
	if !found {
		t.Errorf("the 2000-character user is not in the JSON's users: %d users", len(r.Workload.Users))
	}
	if !bytes.Contains([]byte(files["json"]), []byte(`\u003cscript\u003e`)) {
		t.Error("JSON does not carry the <script> name HTML-escaped")
	}
}

// The report shows the simulated plan: its verdict first, in the same
// words in the Markdown, the HTML and the JSON; the section "What buying
// or changing would do" with the plan chart and the cross-check by
// averages; and each recommendation's simulated effect.
func TestReportCommandSimulatedPlan(t *testing.T) {
	// 60 one-GPU jobs of 3 h on two nodes, one every 12 h: enough for a
	// plan (plan.min_jobs 50, plan.min_window 7 days).
	var jobs []reportJob
	for i := range 60 {
		jobs = append(jobs, reportJob{
			id: fmt.Sprint(5000 + i), user: []string{"ann", "bob"}[i%2], account: "ml", name: "train",
			start: oct2026.Add(time.Duration(6+i*12) * time.Hour), run: 3 * time.Hour, util: float64(30 + 10*(i%6)),
			node: fmt.Sprintf("gpu%02d", 1+i%2), wait: time.Duration(1+i%4) * 5 * time.Minute,
		})
	}
	db := reportDB(t, jobs...)
	dir := t.TempDir()
	if _, err := runCLI(t, "report", "--db", db, "--month", "2026-10", "--out", dir); err != nil {
		t.Fatalf("report: %v", err)
	}
	files := reportFiles(t, dir, "2026-10", "html", "md", "json")
	var r struct {
		SimulatedPlan *struct {
			Simulated    bool   `json:"simulated"`
			NotSimulated string `json:"not_simulated"`
			Verdict      struct {
				Code string `json:"code"`
				Text string `json:"text"`
			} `json:"verdict"`
			Models []struct {
				Model string            `json:"model"`
				Curve []json.RawMessage `json:"curve"`
			} `json:"models"`
		} `json:"simulated_plan"`
		Recommendations []struct {
			ID        string `json:"id"`
			Simulated *struct {
				Text string `json:"text"`
			} `json:"simulated"`
		} `json:"recommendations"`
	}
	if err := json.Unmarshal([]byte(files["json"]), &r); err != nil {
		t.Fatal(err)
	}
	sp := r.SimulatedPlan
	if sp == nil || !sp.Simulated || sp.Verdict.Text == "" || len(sp.Models) == 0 || len(sp.Models[0].Curve) == 0 {
		t.Fatalf("JSON simulated_plan = %+v, want a simulated plan with a verdict and a purchase curve", sp)
	}
	md := strings.ReplaceAll(files["md"], "\\", "")
	page := html.UnescapeString(files["html"])
	if !strings.Contains(md, "## Capacity plan\n\nVerdict: "+sp.Verdict.Text+"\n") {
		t.Errorf("Markdown's plan does not start with the JSON's verdict %q:\n%.1500s", sp.Verdict.Text, md[strings.Index(md, "## Capacity plan"):])
	}
	if !strings.Contains(page, "<p>Verdict: "+sp.Verdict.Text+"</p>") {
		t.Errorf("HTML lacks the JSON's verdict %q", sp.Verdict.Text)
	}
	for _, want := range []string{"## What buying or changing would do", "### Cross-check by averages (Little's law)", "### 1. Policy changes first"} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q", want)
		}
	}
	// The purchase chart, or where every model meets the target with what
	// it has (no size searched), the chart's place saying so.
	switch {
	case strings.Contains(files["html"], `<figure id="chart-plan" class="chart">`):
	case strings.Contains(files["html"], `<figure id="chart-plan" class="chart chart-empty">`):
		if !strings.Contains(page, "No purchase was searched: every GPU model meets the target") {
			t.Error("HTML's empty plan chart does not say why it is empty")
		}
	default:
		t.Error("HTML has no plan chart")
	}
	for _, rec := range r.Recommendations {
		if rec.Simulated == nil || !strings.Contains(md, rec.Simulated.Text) {
			t.Errorf("recommendation %s: simulated effect %+v not in the JSON and the Markdown", rec.ID, rec.Simulated)
		}
	}
}

// A database that cannot be opened is an error, not a usage error, and
// writes nothing.
func TestReportCommandMissingDB(t *testing.T) {
	dir := t.TempDir()
	_, err := runCLI(t, "report", "--db", filepath.Join(dir, "missing", "none.db"), "--month", "2026-10", "--out", filepath.Join(dir, "out"))
	var ue usageError
	if err == nil || errors.As(err, &ue) {
		t.Fatalf("missing database: %v, want a plain error", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "out")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("output directory created for a failed report: %v", err)
	}
}

// jobs --sort, --reverse and --text reach the store; a bad key is a usage
// error.
func TestJobsSortAndText(t *testing.T) {
	oct := time.Date(2026, 10, 5, 0, 0, 0, 0, time.UTC)
	db := reportDB(t,
		reportJob{id: "11", user: "alice", account: "lab", name: "train-a", start: oct, run: 3 * time.Hour, util: 50},
		reportJob{id: "12", user: "alice", account: "lab", name: "eval-b", start: oct.Add(time.Hour), run: time.Hour, util: 50},
		reportJob{id: "13", user: "alice", account: "lab", name: "train-c", start: oct.Add(2 * time.Hour), run: 2 * time.Hour, util: 50},
	)
	ids := func(args ...string) []string {
		t.Helper()
		out, err := runCLI(t, append([]string{"jobs", "--db", db, "--json"}, args...)...)
		if err != nil {
			t.Fatalf("jobs %v: %v", args, err)
		}
		var got []struct {
			JobID string `json:"job_id"`
		}
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("jobs %v: %v\n%s", args, err, out)
		}
		var s []string
		for _, j := range got {
			s = append(s, j.JobID)
		}
		return s
	}
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{nil, []string{"13", "12", "11"}},
		{[]string{"--sort", "elapsed"}, []string{"11", "13", "12"}},
		{[]string{"--sort", "elapsed", "--reverse"}, []string{"12", "13", "11"}},
		{[]string{"--text", "TRAIN"}, []string{"13", "11"}},
	} {
		if got := ids(tt.args...); !slices.Equal(got, tt.want) {
			t.Errorf("jobs %v: %v, want %v", tt.args, got, tt.want)
		}
	}
	if _, err := runCLI(t, "jobs", "--db", db, "--sort", "bogus"); exitCode(err) != exitUsage {
		t.Errorf("jobs --sort bogus: %v (exit %d), want a usage error", err, exitCode(err))
	}
}

// TestReportCommandPurchaserNumbers: gpuprof report over a database gives
// per GPU model the inventory's cards, the occupancy and the queue wait of
// the jobs that ran on it, the energy per model and account from the
// profiles' per-GPU energy (unknown, never 0, where none was recorded),
// and an earlier month's lost GPU-hours in the comparison.
func TestReportCommandPurchaserNumbers(t *testing.T) {
	jobs := monthJobs(oct2026, 2000, 12, []string{"ann", "bob"}, []string{"ml", "bio"}, "train")
	for i := range jobs {
		if jobs[i].account == "ml" {
			jobs[i].energyKWh = 1.5 // 1.5 kWh on each ml job's one GPU
		}
	}
	sep := monthJobs(sep2026, 1000, 5, []string{"ann"}, []string{"ml"}, "train")
	sep[0].state = "FAILED" // 3 GPU-hours lost in September
	db := reportDB(t, append(jobs, sep...)...)
	dir := t.TempDir()
	if _, err := runCLI(t, "report", "--db", db, "--month", "2026-10", "--out", dir); err != nil {
		t.Fatalf("report: %v", err)
	}
	files := reportFiles(t, dir, "2026-10", "html", "md", "json")
	type energy struct {
		KWh      float64 `json:"kwh"`
		Measured float64 `json:"measured_gpu_hours"`
		Coverage float64 `json:"coverage"`
	}
	type dist struct {
		N   int     `json:"n"`
		P50 float64 `json:"p50"`
		P95 float64 `json:"p95"`
	}
	var r struct {
		Missing  []string `json:"missing"`
		Workload struct {
			Window   analysis.Window `json:"window"`
			Headline struct {
				InventoryGPUs int     `json:"inventory_gpus"`
				GPUWait       dist    `json:"gpu_wait_s"`
				Energy        energy  `json:"energy"`
				Allocated     float64 `json:"allocated_gpu_hours"`
			} `json:"headline"`
			Daily []struct {
				Capacity float64 `json:"capacity_gpu_hours"`
			} `json:"daily"`
			Models []struct {
				Model    string    `json:"model"`
				Cards    int       `json:"cards"`
				GPUHours float64   `json:"gpu_hours"`
				Capacity float64   `json:"capacity_gpu_hours"`
				Occ      float64   `json:"occupancy"`
				Wait     dist      `json:"wait_s"`
				Energy   energy    `json:"energy"`
				HistGPUH []float64 `json:"vram_peak_hist_gpu_hours"`
			} `json:"models"`
			Accounts []struct {
				Name   string `json:"name"`
				Energy energy `json:"energy"`
			} `json:"accounts"`
		} `json:"workload"`
		Earlier []struct {
			Month string  `json:"month"`
			Lost  float64 `json:"lost_gpu_hours"`
		} `json:"earlier"`
	}
	if err := json.Unmarshal([]byte(files["json"]), &r); err != nil {
		t.Fatal(err)
	}
	w := r.Workload
	near := func(what string, got, want float64) {
		t.Helper()
		if d := got - want; d > 1e-6 || d < -1e-6 {
			t.Errorf("%s = %v, want %v", what, got, want)
		}
	}
	// The profiles name two nodes with one H100 each.
	if w.Headline.InventoryGPUs != 2 || len(w.Models) != 1 || w.Models[0].Model != testH100 || w.Models[0].Cards != 2 {
		t.Fatalf("inventory %d GPUs, models %+v; want 2 H100 cards", w.Headline.InventoryGPUs, w.Models)
	}
	m := w.Models[0]
	hours := w.Window.To.Sub(w.Window.From).Hours()
	near("model GPU-hours", m.GPUHours, 12*3)
	near("model capacity", m.Capacity, 2*hours)
	near("model occupancy", m.Occ, 36/(2*hours))
	near("day 1 capacity", w.Daily[0].Capacity, 2*24)
	// Waits of 10, 20, 30, 40, 50 minutes round-robin over 12 jobs:
	// nearest rank p50 is the 6th (20 min), p95 the 12th (50 min).
	if m.Wait != (dist{N: 12, P50: 1200, P95: 3000}) || w.Headline.GPUWait != m.Wait {
		t.Errorf("model wait %+v, GPU jobs' wait %+v; want 12 waits, p50 1200 s, p95 3000 s", m.Wait, w.Headline.GPUWait)
	}
	// Half the jobs (ml's six) recorded 1.5 kWh each.
	near("model kWh", m.Energy.KWh, 6*1.5)
	near("model energy coverage", m.Energy.Coverage, 0.5)
	near("VRAM GPU-hours in the 20-30 % bin", m.HistGPUH[2], 36) // 20 GiB of 80
	for _, a := range w.Accounts {
		switch a.Name {
		case "ml":
			near("ml kWh", a.Energy.KWh, 9)
			near("ml measured GPU-hours", a.Energy.Measured, 18)
		case "bio":
			if a.Energy != (energy{}) {
				t.Errorf("bio energy %+v, want none measured", a.Energy)
			}
		}
	}
	if len(r.Earlier) != 1 || r.Earlier[0].Month != "2026-09" {
		t.Fatalf("earlier = %+v", r.Earlier)
	}
	near("September's lost GPU-hours", r.Earlier[0].Lost, 3)
	md := files["md"]
	for _, want := range []string{
		"| bio | 18.0 | unknown | none | unknown |",
		"| ml | 18.0 | 9.0 kWh | 100.0 % | 0.50 |",
		"| 2026-09 | 5 | 15.0 |",
		"| " + testH100 + " | 80 GiB | 2 | 36.0 | " + fmt.Sprintf("%.1f %%", 100*36/(2*hours)) + " | 00:20:00 | 00:50:00 |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q", want)
		}
	}
	if !strings.Contains(md, "| 3.0 | unknown |") {
		t.Errorf("Markdown's comparison lacks September's 3.0 lost GPU-hours and unknown energy:\n%s", md[strings.Index(md, "## This month against"):][:800])
	}
	if !strings.Contains(files["html"], `<figure id="chart-trend" class="chart">`) {
		t.Error("HTML has no trend chart for two months")
	}
}

// The report counts the notices stored with the month's profiles, by the
// time they were decided: a notice of September on a job that ran into
// October is not October's. A job that ended half an hour after a sent
// notice freed the rest of its limit (TimeLimit is twice the run in
// reportDB: 3 h of its 6 h); a capped notice frees nothing. A month
// without notices says so.
func TestReportCommandNotices(t *testing.T) {
	at := func(d, h int) time.Time { return time.Date(2026, time.Month(10), d, h, 0, 0, 0, time.Local) }
	sent := profile.Notice{Rule: profile.RuleIdleGPU, Time: at(5, 12).Add(30 * time.Minute), Since: at(5, 11),
		GPUs: []int{0}, Recipient: "ann@example.org", Status: profile.NoticeSent, Evidence: "1 of 1 GPUs idle"}
	capped := profile.Notice{Rule: profile.RuleIdleJob, Time: at(6, 11), Since: at(6, 10), GPUs: []int{0},
		Status: profile.NoticeCapped, Evidence: "the GPU of the job idle", Detail: "daily_cap 3"}
	early := profile.Notice{Rule: profile.RuleIdleGPU, Time: at(0, 22), Since: at(0, 21), GPUs: []int{0},
		Status: profile.NoticeSent, Evidence: "1 of 1 GPUs idle"} // 2026-09-30 22:00
	db := reportDB(t,
		reportJob{id: "3001", user: "ann", account: "ml", name: "a", start: at(5, 10), run: 3 * time.Hour, util: 5, notices: []profile.Notice{sent}},
		reportJob{id: "3002", user: "bob", account: "ml", name: "b", start: at(6, 10), run: 3 * time.Hour, util: 5, notices: []profile.Notice{capped}},
		reportJob{id: "3003", user: "ann", account: "ml", name: "c", start: at(0, 20), run: 6 * time.Hour, util: 5, notices: []profile.Notice{early}},
		reportJob{id: "3004", user: "ann", account: "ml", name: "d", start: time.Date(2026, 8, 10, 10, 0, 0, 0, time.Local), run: time.Hour, util: 50},
	)
	dir := t.TempDir()
	if _, err := runCLI(t, "report", "--db", db, "--month", "2026-10", "--out", dir, "--format", "md,json"); err != nil {
		t.Fatalf("report: %v", err)
	}
	files := reportFiles(t, dir, "2026-10", "md", "json")
	var r struct {
		Notices analysis.NoticeSummary `json:"notices"`
	}
	if err := json.Unmarshal([]byte(files["json"]), &r); err != nil {
		t.Fatal(err)
	}
	n := r.Notices
	wantCounts := []analysis.NoticeCount{{Rule: profile.RuleIdleGPU, Status: profile.NoticeSent, N: 1},
		{Rule: profile.RuleIdleJob, Status: profile.NoticeCapped, N: 1}}
	if n.Notices != 2 || n.Sent != 1 || n.Jobs != 2 || n.FreedJobs != 1 || n.FreedUnknown != 0 ||
		n.FreedGPUHours < 3-1e-9 || n.FreedGPUHours > 3+1e-9 || !slices.Equal(n.Counts, wantCounts) {
		t.Errorf("notices = %+v, want 2 of 2 jobs (1 sent, 1 capped), 1 job freeing 3 GPU-hours", n)
	}
	if !n.Window.From.Equal(oct2026) || !n.Window.To.Equal(oct2026.AddDate(0, 1, 0)) {
		t.Errorf("notices window %v, want October", n.Window)
	}
	for _, want := range []string{"## Notices to users\n",
		"2 notices to the users of 2 jobs (1 sent, 1 not sent or pending); 1 job ended within an hour of one, freeing 3.0 GPU-hours of their time limits.",
		"| idle GPU | sent | 1 |", "| every GPU of the job idle | not sent: daily cap | 1 |"} {
		if !strings.Contains(files["md"], want) {
			t.Errorf("Markdown lacks %q:\n%s", want, section(files["md"], "## Notices to users"))
		}
	}

	dir = t.TempDir()
	if _, err := runCLI(t, "report", "--db", db, "--month", "2026-08", "--out", dir, "--format", "md"); err != nil {
		t.Fatalf("report of August: %v", err)
	}
	md := reportFiles(t, dir, "2026-08", "md")["md"]
	if !strings.Contains(section(md, "## Notices to users"), "No notices this month") {
		t.Errorf("August's report does not say it had no notices:\n%s", section(md, "## Notices to users"))
	}
}

// section is the Markdown section of md that starts with heading, up to
// the next one of its level.
func section(md, heading string) string {
	i := strings.Index(md, heading)
	if i < 0 {
		return ""
	}
	rest := md[i+len(heading):]
	if j := strings.Index(rest, "\n## "); j >= 0 {
		rest = rest[:j]
	}
	return heading + rest
}
