package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/slurmext"
)

// jobIDPrefix names the jobs of TestJobIDsAsSlurmPrintsThem.
const jobIDPrefix = "e2e-jobid-"

// slurmJobID is one allocation as sacct names it: JobID (53_1, 60+1) and
// JobIDRaw (58).
type slurmJobID struct{ id, raw string }

// sacctJobIDs returns what `sacct -X -P -n --format=JobID,JobIDRaw` says
// about the given jobs (array tasks and het components included), once it
// lists want rows.
func sacctJobIDs(t *testing.T, c *cluster, ids []string, want int) []slurmJobID {
	t.Helper()
	deadline := time.Now().Add(recordTimeout)
	for {
		out, err := c.output("sacct", "-X", "-P", "-n", "--format=JobID,JobIDRaw", "-j", strings.Join(ids, ","))
		var rows []slurmJobID
		for line := range strings.SplitSeq(out, "\n") {
			if id, raw, ok := strings.Cut(strings.TrimSpace(line), "|"); ok {
				rows = append(rows, slurmJobID{id, raw})
			}
		}
		if err == nil && len(rows) == want {
			return rows
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s sacct -j %s lists %d rows, want %d: %v\n%s", recordTimeout, strings.Join(ids, ","), len(rows), want, err, out)
		}
		time.Sleep(time.Second)
	}
}

// showHeadings runs `gpuprof show id` and returns its "Job …" headings and
// its first line.
func showHeadings(t *testing.T, bin, cfgPath, id string) (heads []string, first string) {
	t.Helper()
	out, err := gpuprofOutput(bin, "show", id, "--config", cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ = strings.Cut(string(out), "\n")
	for line := range strings.SplitSeq(string(out), "\n") {
		if strings.HasPrefix(line, "Job ") {
			heads = append(heads, line)
		}
	}
	return heads, first
}

// heading is the line `gpuprof show` heads a job with, built from what
// sacct printed.
func heading(r slurmJobID) string {
	if r.id == r.raw {
		return "Job " + r.id + " (cluster gpuproftest)"
	}
	return "Job " + r.id + " (raw id " + r.raw + ", cluster gpuproftest)"
}

// inTaskOrder sorts sacct's rows as Slurm numbers them (53_1, 53_2, 53_10).
func inTaskOrder(t *testing.T, rows []slurmJobID) []slurmJobID {
	t.Helper()
	out := slices.Clone(rows)
	ref := func(r slurmJobID) slurmext.JobRef {
		x, err := slurmext.ParseJobRef(r.id)
		if err != nil {
			t.Fatalf("sacct printed JobID %q: %v", r.id, err)
		}
		return x
	}
	slices.SortFunc(out, func(a, b slurmJobID) int { return ref(a).Compare(ref(b)) })
	return out
}

// TestJobIDsAsSlurmPrintsThem runs an array job and a heterogeneous job on
// a real Slurm with accounting and jobcomp, and checks that `gpuprof show`
// (by Slurm id, by raw id, by array or het job id), `gpuprof jobs` and the
// TUI name every allocation as sacct does — from the jobcomp records, then
// after `gpuprof import sacct`. It runs on the shared cluster: the
// import reads its account's jobs only (importOwnAccount).
func TestJobIDsAsSlurmPrintsThem(t *testing.T) {
	requireClusterHost(t)
	t.Parallel()
	bin := gpuprofBinary(t)
	work := t.TempDir()
	if err := os.Chmod(work, 0o755); err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(work, "gpuprof.toml")
	c := sharedCluster(t)
	c.hooks(t, bin, cfgPath)
	simDir := filepath.Join(work, "sim")
	if err := os.Mkdir(simDir, 0o777); err != nil {
		t.Fatal(err)
	}
	cfg := writeCaptureConfig(t, cfgPath, work, simDir, filepath.Join(c.Dir, "etc", "gres.conf"))
	c.importOwnAccount(t, cfgPath, work)
	t.Cleanup(func() {
		if t.Failed() {
			if data, err := os.ReadFile(cfg.LogFile); err == nil {
				t.Logf("==== %s (last 60 lines)\n%s", cfg.LogFile, lastLines(string(data), 60))
			}
		}
	})

	common := []string{"-o", "/dev/null", "--chdir", work, "--time=5"}
	arrayID := c.sbatch(t, append(common, "-J", jobIDPrefix+"array", "--array=1-3", "--wrap", "sleep 1")...)
	// A heterogeneous job of two one-CPU components; whether this Slurm
	// runs it on the single node or not, sacct records both components
	// (cancelled if it cannot start), and that record is what is checked.
	hetScript := filepath.Join(work, "het.sh")
	// Each component in the scope's partition and account: sbatch's own
	// -p and -A are the first component's.
	own := "#SBATCH -n 1 -p " + c.Name + " -A " + c.Name + "\n"
	if err := os.WriteFile(hetScript, []byte("#!/bin/sh\n"+own+"#SBATCH hetjob\n"+own+"sleep 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	hetID := c.sbatch(t, append(common, "-J", jobIDPrefix+"het", hetScript)...)
	t.Logf("submitted array %s, heterogeneous job %s", arrayID, hetID)
	// The array's tasks start within a scheduling cycle or two (seconds);
	// a het job that has not started in 20 s will not on this node (seen
	// on 22.05.8: it stays PENDING).
	deadline := time.Now().Add(20 * time.Second)
	for {
		state, err := c.output("squeue", "-h", "-j", hetID, "-o", "%T %r")
		if err != nil {
			t.Fatal(err)
		}
		if state == "" {
			t.Logf("heterogeneous job %s ran", hetID)
			break
		}
		if time.Now().After(deadline) {
			t.Logf("heterogeneous job %s still %q after 20s on one node: cancelled; sacct keeps its components", hetID, state)
			c.run(t, "scancel", hetID)
			break
		}
		time.Sleep(time.Second)
	}
	c.waitDrained(t, queueTimeout)

	rows := sacctJobIDs(t, c.cluster, []string{arrayID, hetID}, 5)
	var array, het []slurmJobID
	for _, r := range rows {
		switch {
		case strings.HasPrefix(r.id, arrayID+"_"):
			array = append(array, r)
		case strings.HasPrefix(r.id, hetID+"+"):
			het = append(het, r)
		default:
			t.Fatalf("sacct -j %s,%s lists %v", arrayID, hetID, r)
		}
	}
	if len(array) != 3 || len(het) != 2 {
		t.Fatalf("sacct lists array tasks %v and het components %v, want 3 and 2", array, het)
	}
	t.Logf("sacct: %v", rows)

	// check compares what gpuprof prints with sacct's rows.
	check := func(t *testing.T, rows []slurmJobID, group string) {
		t.Helper()
		for _, r := range rows {
			for _, asked := range []string{r.id, r.raw} {
				if asked == group {
					// The raw id that is the array's or het job's own
					// names them all, as in sacct -j: checked below.
					continue
				}
				heads, _ := showHeadings(t, bin, cfgPath, asked)
				if len(heads) != 1 || heads[0] != heading(r) {
					t.Errorf("gpuprof show %s: headings %q, want [%q] (sacct: %s is raw id %s)", asked, heads, heading(r), r.id, r.raw)
				}
			}
			out, err := gpuprofOutput(bin, "show", r.id, "--json", "--config", cfgPath)
			if err != nil {
				t.Fatal(err)
			}
			var vs []struct {
				JobID     string `json:"job_id"`
				DisplayID string `json:"display_id"`
			}
			if err := json.Unmarshal(out, &vs); err != nil || len(vs) != 1 || vs[0].DisplayID != r.id || vs[0].JobID != r.raw {
				t.Errorf("gpuprof show %s --json: %s (%v), want display_id %s, job_id %s", r.id, out, err, r.id, r.raw)
			}
		}
		// The array or het job id: every task or component, in order.
		var want []string
		names := []string{}
		for _, r := range inTaskOrder(t, rows) {
			want, names = append(want, heading(r)), append(names, r.id)
		}
		heads, first := showHeadings(t, bin, cfgPath, group)
		if !slices.Equal(heads, want) {
			t.Errorf("gpuprof show %s: headings\n%s\nwant\n%s", group, strings.Join(heads, "\n"), strings.Join(want, "\n"))
		}
		if w := fmt.Sprintf("%s names %d jobs: %s", group, len(rows), strings.Join(names, ", ")); first != w {
			t.Errorf("gpuprof show %s: first line %q, want %q", group, first, w)
		}
		// jobs --text finds them by their Slurm ids and prints those.
		sep := "_"
		if strings.Contains(rows[0].id, "+") {
			sep = "+"
		}
		out, err := gpuprofOutput(bin, "jobs", "--text", group+sep, "--config", cfgPath)
		if err != nil {
			t.Fatal(err)
		}
		var listed []string
		for i, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if f := strings.Fields(line); i > 0 && len(f) > 0 {
				listed = append(listed, f[0])
			}
		}
		slices.Sort(listed)
		slices.Sort(names)
		if !slices.Equal(listed, names) {
			t.Errorf("gpuprof jobs --text %s%s lists %v, sacct %v:\n%s", group, sep, listed, names, out)
		}
	}

	t.Run("jobcomp", func(t *testing.T) {
		// jobcomp runs for each task as it ends and spools its record;
		// no agent runs here, so an ingest pass writes them: wait for all
		// three.
		waitIngestedViews(t, bin, cfgPath, func(vs map[string]jobJSON) string {
			for _, r := range array {
				if v, ok := vs[r.raw]; !ok || v.Sched == nil {
					return "no jobcomp record of " + r.id + " (raw id " + r.raw + ")"
				}
			}
			return ""
		})
		check(t, array, arrayID)
	})

	t.Run("after-import", func(t *testing.T) {
		importSacct(t, c.cluster, bin, cfgPath)
		check(t, array, arrayID)
		check(t, het, hetID)
	})

	t.Run("tui", func(t *testing.T) {
		requireTmux(t)
		term := startTmux(t, 120, 30, []string{"NO_COLOR=1"}, shellQuote(bin)+" tui --config "+shellQuote(cfgPath))
		var ids []string
		for _, r := range rows {
			ids = append(ids, r.id)
		}
		term.waitFor("every task and component by its Slurm id", containsAll(ids...))
		// The detail of the array's first task names it and its raw id.
		first := inTaskOrder(t, array)[0]
		term.keys("/")
		term.text(first.id)
		term.keys("Enter")
		term.waitFor("the list filtered to "+first.id, func(s string) bool {
			return strings.Contains(s, first.id) && !strings.Contains(s, het[0].id)
		})
		term.keys("Enter")
		term.waitFor("the detail of "+first.id, containsAll("job "+first.id+" (raw id "+first.raw+")"))
		term.keys("q")
	})
}
