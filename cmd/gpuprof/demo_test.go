package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestDemoSpanUsage: a window demo.Span refuses is a usage error (exit 2).
func TestDemoSpanUsage(t *testing.T) {
	for _, args := range [][]string{{"--months", "13"}, {"--days", "-1"}, {"--start", "10/01/2026"}} {
		root := newRootCommand()
		var out strings.Builder
		root.SetOut(&out)
		root.SetErr(&out)
		root.SetArgs(append([]string{"--config", filepath.Join(t.TempDir(), "none.toml"), "demo", "month", "--out", t.TempDir()}, args...))
		if err := root.Execute(); exitCode(err) != 2 {
			t.Errorf("demo month %v: exit %d (%v), want 2 (usage)", args, exitCode(err), err)
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

// TestDemoSameWithAnySlurmConf is make demo's promise that it is the same
// on every machine: with the demo's configuration (as scripts/demo.sh
// writes it: its own slurm.conf and gres.conf from `gpuprof demo conf`,
// bound to cluster demo), the month's plan, what-if and report JSON are
// identical whether the configured default slurm.conf is the demo's,
// another cluster's (lab2: localhost, 4 GPUs and 8 shards, as a host
// running the test cluster has) or absent. And with no demo configuration
// at all, lab2's file changes nothing against no slurm.conf either: it is
// not used, and the answers say so.
func TestDemoSameWithAnySlurmConf(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates and plans a month")
	}
	dir := t.TempDir()
	db := filepath.Join(dir, "month.db")
	run := func(conf string, args ...string) string {
		t.Helper()
		return mustRun(t, conf, append([]string{"--db", db}, args...)...)
	}
	if out := run("", "demo", "conf", "--out", dir); !strings.Contains(out, filepath.Join(dir, "slurm.conf")) {
		t.Fatalf("demo conf wrote %q", out)
	}
	run("", "demo", "month", "--out", dir, "--start", "2026-10-01", "--months", "1", "--interval", "15m")
	foreign := filepath.Join(dir, "etc", "slurm.conf")
	if err := os.MkdirAll(filepath.Dir(foreign), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(foreign, []byte(foreignSlurmConf), 0o644); err != nil {
		t.Fatal(err)
	}
	// scripts/demo.sh's configuration, with slurm_conf as given.
	demoConf := func(slurmConf string) string {
		return fmt.Sprintf("cluster = \"demo\"\nslurm_conf = %q\n[clusters.demo]\nslurm_conf = %q\ngres_conf = %q\n",
			slurmConf, filepath.Join(dir, "slurm.conf"), filepath.Join(dir, "gres.conf"))
	}
	missing := filepath.Join(dir, "none", "slurm.conf")
	aconf := filepath.Join("..", "..", "scripts", "demo-analysis.toml")
	answers := func(conf, tag string) map[string]string {
		out := map[string]string{
			"plan":   run(conf, "plan", "--json", "--since", "2026-10-01", "--until", "2026-11-01", "--analysis-config", aconf),
			"whatif": run(conf, "whatif", "--json", "--month", "2026-10", "--seeds", "3", "--add", "2xH100"),
		}
		rdir := filepath.Join(dir, "report-"+tag)
		run(conf, "report", "--month", "2026-10", "--out", rdir, "--format", "json", "--analysis-config", aconf)
		b, err := os.ReadFile(filepath.Join(rdir, "gpuprof-report-2026-10.json"))
		if err != nil {
			t.Fatal(err)
		}
		out["report"] = string(b)
		return out
	}
	own := answers(demoConf(filepath.Join(dir, "slurm.conf")), "own")

	// The same configuration split as the Puppet slurm module and many
	// sites write it: slurm.conf with "Include nodes.conf" and "Include
	// partitions.conf" (issue #37). The answers are byte-identical but for
	// the path of the slurm.conf they name.
	split := splitSlurmConf(t, filepath.Join(dir, "slurm.conf"), filepath.Join(dir, "split"))
	splitConf := fmt.Sprintf("cluster = \"demo\"\n[clusters.demo]\nslurm_conf = %q\ngres_conf = %q\n", split, filepath.Join(dir, "gres.conf"))
	splitAnswers := answers(splitConf, "split")
	for _, what := range []string{"plan", "whatif", "report"} {
		// The report's "generated" instant is the one field that differs.
		got := generatedLine.ReplaceAllString(strings.ReplaceAll(splitAnswers[what], jsonPath(t, split), jsonPath(t, filepath.Join(dir, "slurm.conf"))), "")
		want := generatedLine.ReplaceAllString(own[what], "")
		if got != want || got == "" {
			t.Errorf("split slurm.conf: the demo's %s differs from the single file's (%s)", what, firstDiff(want, got))
		}
	}
	for name, got := range map[string]map[string]string{
		"lab2's slurm.conf at the default path": answers(demoConf(foreign), "foreign"),
		"no slurm.conf at the default path":     answers(demoConf(missing), "missing"),
	} {
		for _, what := range []string{"plan", "whatif", "report"} {
			a, saidA := withoutNotUsed(t, own[what])
			b, saidB := withoutNotUsed(t, got[what])
			if a != b || len(saidA)+len(saidB) != 0 {
				t.Errorf("%s: the demo's %s differs from the one with its own slurm.conf (%s), or says a file was not used (%q %q)",
					name, what, firstDiff(a, b), saidA, saidB)
			}
		}
	}
	var p struct {
		Conf struct {
			Cluster   string `json:"cluster"`
			SlurmConf string `json:"slurm_conf"`
		} `json:"conf"`
		Simulated struct {
			ClusterSource string `json:"cluster_source"`
			Verdict       struct {
				Code string `json:"code"`
			} `json:"verdict"`
		} `json:"simulated"`
	}
	if err := json.Unmarshal([]byte(own["plan"]), &p); err != nil {
		t.Fatal(err)
	}
	if p.Conf.Cluster != "demo" || p.Conf.SlurmConf != filepath.Join(dir, "slurm.conf") || p.Simulated.ClusterSource != "profiles and slurm.conf of cluster demo" ||
		p.Simulated.Verdict.Code != "buy" {
		t.Errorf("the demo's plan: %+v, want cluster demo with its own slurm.conf, replayed to a purchase", p)
	}

	// Without the demo's configuration: lab2's file is not used.
	bare := func(slurmConf string) string {
		return run(fmt.Sprintf("slurm_conf = %q\n", slurmConf), "plan", "--json", "--since", "2026-10-01", "--until", "2026-11-01", "--analysis-config", aconf)
	}
	a, said := withoutNotUsed(t, bare(foreign))
	b, _ := withoutNotUsed(t, bare(missing))
	if a != b || len(said) == 0 || !strings.Contains(said[0], "is cluster lab2's, the jobs are demo's: not used") {
		t.Errorf("the demo month with lab2's slurm.conf and no demo configuration: %s; said %q", firstDiff(a, b), said)
	}
}

// splitSlurmConf writes the slurm.conf at path into dir as slurm.conf
// with "Include nodes.conf" and "Include partitions.conf" in place of its
// NodeName and PartitionName lines, and returns the new slurm.conf.
func splitSlurmConf(t *testing.T, path, dir string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var main, nodes, parts strings.Builder
	included := false
	for _, line := range strings.SplitAfter(string(b), "\n") {
		switch {
		case strings.HasPrefix(line, "NodeName="):
			nodes.WriteString(line)
		case strings.HasPrefix(line, "PartitionName="):
			parts.WriteString(line)
		default:
			main.WriteString(line)
			continue
		}
		if !included {
			main.WriteString("Include nodes.conf\nInclude partitions.conf\n")
			included = true
		}
	}
	if nodes.Len() == 0 || parts.Len() == 0 {
		t.Fatalf("%s has no node or partition lines to split", path)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"slurm.conf": main.String(), "nodes.conf": nodes.String(), "partitions.conf": parts.String()} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "slurm.conf")
}

// generatedLine is the report JSON's line that names when it was written.
var generatedLine = regexp.MustCompile(`(?m)^\s*"generated": "[^"]*",\n`)

// jsonPath is a path as JSON writes it inside a string.
func jsonPath(t *testing.T, p string) string {
	t.Helper()
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Trim(string(b), "\"")
}
