package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/cliview"
	"github.com/gpuprof/gpuprof/internal/jobfixture"
	"github.com/gpuprof/gpuprof/internal/present"
	"github.com/gpuprof/gpuprof/jobsource"
	"github.com/gpuprof/gpuprof/store"
	"github.com/gpuprof/gpuprof/tui"
)

// figures are one page's GPUs held/used and utilisation of one job, as
// present writes them ("2/2", "48").
type figures struct{ gpus, util string }

// TestOneJobOneAnswer (issue #30): a shard job and a 2-GPU job whose GPUs
// ran at 77 % and 19 % show the same GPUs held/used and utilisation in
// every page that shows one job — the jobs table and --json, show's text
// and --json, the TUI's list and detail — and in the report's task table
// (one run each): analysis.Shown's figures, 1/1 at 14 % and 2/2 at 48 %
// (the mean over the two GPUs, not the busier one's 77 %). The figures
// each page gave are the golden file (go test ./cmd/gpuprof -run
// OneJobOneAnswer -update rewrites it).
func TestOneJobOneAnswer(t *testing.T) {
	t.Setenv("TZ", "UTC")
	loc := time.Local
	time.Local = time.UTC
	t.Cleanup(func() { time.Local = loc })
	db := showDB(t,
		jobfixture.Job{ID: "7101", Name: "pair", State: "COMPLETED", Gres: "billing=8,cpu=8,gres/gpu=2,mem=64G,node=1", GPUs: 2, Minutes: 120,
			UtilOf: func(k, _ int) (uint32, bool) { return []uint32{77, 19}[k], true }, MemGiB: jobfixture.Steady(20)},
		jobfixture.Job{ID: "7102", Name: "notebook", State: "COMPLETED", Gres: "billing=1,cpu=2,gres/shard=1,mem=16G,node=1", GPUs: 1, Minutes: 120, Shared: true,
			Util: jobfixture.Steady(14), MemGiB: jobfixture.Steady(6)},
	)
	jobs := []struct{ id, task string }{{"7101", "pair"}, {"7102", "notebook"}}
	want := map[string]figures{"7101": {"2/2", "48"}, "7102": {"1/1", "14"}}
	pages := []string{"jobs", "jobs --json", "show", "show --json", "tui list", "tui detail", "report"}
	got := map[string]map[string]figures{} // page → job → figures
	for _, p := range pages {
		got[p] = map[string]figures{}
	}

	// jobs: the table's GPUS and UTIL, and --json.
	out, err := runCLI(t, "jobs", "--db", db, "--format", "jobid,gpus,util")
	if err != nil {
		t.Fatalf("jobs: %v\n%s", err, out)
	}
	for _, m := range regexp.MustCompile(`(?m)^(\d+) +(\S+) +(\S+) %$`).FindAllStringSubmatch(out, -1) {
		got["jobs"][m[1]] = figures{m[2], m[3]}
	}
	jsonFigures := func(page string, args ...string) {
		out, err := runCLI(t, append(args, "--db", db, "--json")...)
		if err != nil {
			t.Fatalf("%s: %v", page, err)
		}
		var vs []cliview.JobJSON
		if err := json.Unmarshal([]byte(out), &vs); err != nil {
			t.Fatalf("%s: %v\n%s", page, err, out)
		}
		for _, v := range vs {
			f := figures{present.GPUs(v.GPUsHeld, 0, false), "-"}
			if v.GPUsUsed != nil {
				f.gpus = present.GPUs(v.GPUsHeld, *v.GPUsUsed, true)
			}
			if v.UtilMean != nil {
				f.util = present.Util(*v.UtilMean)
			}
			got[page][v.JobID] = f
		}
	}
	jsonFigures("jobs --json", "jobs")

	// show: the analysis line, and --json.
	showLine := regexp.MustCompile(`GPUs (\S+) held/used(?: \([^)]*\))?, utilisation (\S+) %`) // a shard job: "(1 shard of 1 GPU)"
	for _, j := range jobs {
		out, err := runCLI(t, "show", "--db", db, j.id)
		if err != nil {
			t.Fatalf("show %s: %v\n%s", j.id, err, out)
		}
		if m := showLine.FindStringSubmatch(out); m != nil {
			got["show"][j.id] = figures{m[1], m[2]}
		}
		jsonFigures("show --json", "show", j.id)
	}

	// The TUI: its list's GPUS and UTIL, and each job's detail.
	got["tui list"], got["tui detail"] = tuiFigures(t, db)

	// The report: each task's utilisation in the task table and its GPUs
	// held and used per run in the JSON (the printed table has no room
	// for them on A4), one run each.
	dir := t.TempDir()
	if out, err := runCLI(t, "report", "--db", db, "--month", "2026-11", "--out", dir, "--format", "md,json"); err != nil {
		t.Fatalf("report: %v\n%s", err, out)
	}
	md, err := os.ReadFile(filepath.Join(dir, "gpuprof-report-2026-11.md"))
	if err != nil {
		t.Fatal(err)
	}
	js, err := os.ReadFile(filepath.Join(dir, "gpuprof-report-2026-11.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		got["report"][j.id] = reportFigures(t, string(md), js, j.task)
	}

	var table strings.Builder
	for _, j := range jobs {
		for _, p := range pages {
			f, ok := got[p][j.id]
			if !ok {
				t.Errorf("%s: job %s not found", p, j.id)
			}
			fmt.Fprintf(&table, "%s %-12s GPUS %-4s UTIL %s\n", j.id, p, f.gpus, f.util)
			if f != want[j.id] {
				t.Errorf("%s: job %s shows GPUs %s and utilisation %s, want %s and %s as every page",
					p, j.id, f.gpus, f.util, want[j.id].gpus, want[j.id].util)
			}
		}
	}
	golden.RequireEqual(t, []byte(table.String()))
}

// tuiFigures drives the TUI over the database as its owner would, at
// 160×40, and reads each job's GPUS and UTIL from the list, then from the
// job's detail (enter, then esc back to the list).
func tuiFigures(t *testing.T, path string) (list, detail map[string]figures) {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	uid := 1001
	src := jobsource.ForCaller(db, store.Caller{UID: uid, User: "alice"})
	defer src.Close()
	m := tea.Model(tui.New(ctx, src, src.Identity(), tui.Options{NoColor: true, Config: analysis.DefaultConfig()}))
	m = settle(t, m, m.Init())
	m = settle(t, m, func() tea.Msg { return tea.WindowSizeMsg{Width: 160, Height: 40} })

	list, detail = map[string]figures{}, map[string]figures{}
	gpusCell, utilCell := regexp.MustCompile(`^\d+/(\d+|-)$`), regexp.MustCompile(`^(\d+)%$`)
	var order []string
	for _, line := range strings.Split(m.View().Content, "\n") {
		fs := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "›")) // › marks the cursor's row
		if len(fs) == 0 || (fs[0] != "7101" && fs[0] != "7102") {
			continue
		}
		f := figures{}
		for _, c := range fs[1:] {
			if gpusCell.MatchString(c) {
				f.gpus = c
			}
			if u := utilCell.FindStringSubmatch(c); u != nil {
				f.util = u[1]
			}
		}
		list[fs[0]] = f
		order = append(order, fs[0])
	}
	// The detail joins a label and its value with a no-break space, which
	// the screen may show as a space.
	held := regexp.MustCompile(`held/used[\x{a0} ](\d+/[\d-]+)`)
	util := regexp.MustCompile(`· util[\x{a0} ](\d+)%`)
	key := func(c rune) tea.Cmd {
		return func() tea.Msg { return tea.KeyPressMsg{Code: c} }
	}
	for i, id := range order {
		if i > 0 {
			m = settle(t, m, key(tea.KeyDown))
		}
		m = settle(t, m, key(tea.KeyEnter))
		screen := m.View().Content
		if !strings.Contains(screen, "job "+id) {
			t.Fatalf("detail of %s not shown:\n%s", id, screen)
		}
		f := figures{}
		if h := held.FindStringSubmatch(screen); h != nil {
			f.gpus = h[1]
		}
		if u := util.FindStringSubmatch(screen); u != nil {
			f.util = u[1]
		}
		detail[id] = f
		m = settle(t, m, key(tea.KeyEscape))
	}
	return list, detail
}

// settle runs cmd and every command the messages lead to, feeding the
// messages to m, as the TUI's program would.
func settle(t *testing.T, m tea.Model, cmd tea.Cmd) tea.Model {
	t.Helper()
	queue := []tea.Cmd{cmd}
	for steps := 0; len(queue) > 0; steps++ {
		if steps > 1000 {
			t.Fatal("the TUI's commands do not settle")
		}
		c := queue[0]
		queue = queue[1:]
		if c == nil {
			continue
		}
		switch msg := c().(type) {
		case nil, tea.QuitMsg:
		case tea.BatchMsg:
			queue = append(queue, msg...)
		default:
			var next tea.Cmd
			m, next = m.Update(msg)
			queue = append(queue, next)
		}
	}
	return m
}

// reportFigures reads a task's utilisation ("48.0 %") from the report's
// task table and its GPUs held and used per run from the report's JSON,
// written as present writes one job's: with one run, a task's figures are
// its job's.
func reportFigures(t *testing.T, md string, js []byte, task string) figures {
	t.Helper()
	f := figures{}
	var r struct {
		Profiles []struct {
			Name          string   `json:"name"`
			GPUsRequested float64  `json:"gpus_requested"`
			GPUsUsed      *float64 `json:"gpus_used"`
		} `json:"profiles"`
	}
	if err := json.Unmarshal(js, &r); err != nil {
		t.Fatalf("report JSON: %v", err)
	}
	for _, p := range r.Profiles {
		if p.Name == task && p.GPUsUsed != nil {
			f.gpus = present.GPUs(int(p.GPUsRequested), int(*p.GPUsUsed), true)
		}
	}
	var head []string
	for _, line := range strings.Split(md, "\n") {
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		if len(cells) > 1 && cells[0] == "User" && cells[1] == "Task" {
			head = cells
			continue
		}
		if head == nil || len(cells) != len(head) || cells[1] != strings.ReplaceAll(task, "_", `\_`) {
			continue
		}
		for i, h := range head {
			if h != "Util p50" {
				continue
			}
			if v, err := strconv.ParseFloat(strings.TrimSuffix(cells[i], " %"), 64); err == nil {
				f.util = present.Util(v)
			}
		}
		return f
	}
	t.Errorf("report: no task %q in the task table:\n%s", task, md)
	return f
}
