package tui

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/gpuprof/gpuprof/store"
)

// slurmIDJobs are generated jobs of which the newest three are array
// tasks 100010_1 to 100010_3 at raw ids 100012, 100011 and 100010 (the
// last task keeps the array's own id, as Slurm does) and the next two the
// components 100009+0 and 100009+1 at raw ids 100009 and 100008.
func slurmIDJobs() []store.JobView {
	vs := genJobs(12)
	set := func(i int, arrayJob string, task int, het string, off int) {
		r := *vs[i].Sched
		switch {
		case arrayJob != "":
			r.ArrayJobID, r.ArrayTaskID, r.DisplayID = arrayJob, task, fmt.Sprintf("%s_%d", arrayJob, task)
		case het != "":
			r.HetJobID, r.HetOffset, r.DisplayID = het, off, fmt.Sprintf("%s+%d", het, off)
		}
		vs[i].Sched = &r
	}
	set(0, "100010", 1, "", -1)
	set(1, "100010", 2, "", -1)
	set(2, "100010", 3, "", -1)
	set(3, "", -1, "100009", 0)
	set(4, "", -1, "100009", 1)
	return vs
}

// The list and the detail name jobs as Slurm does; the detail adds the
// raw id the nodes know.
func TestSlurmIDs(t *testing.T) {
	root := Identity{User: "root", Admin: true}
	for _, tt := range []struct {
		name string
		keys []string
		want []string
	}{
		{name: "list", want: []string{" 100010_1 ", " 100010_2 ", " 100010_3 ", " 100009+0 ", " 100009+1 ", " 100007 "}},
		{name: "detail_array_task", keys: []string{"enter"}, want: []string{"job 100010_1 (raw id 100012) · "}},
		{name: "detail_own_raw_id", keys: []string{"down", "down", "enter"}, want: []string{"job 100010_3 (raw id 100010) · "}},
		{name: "detail_het_component", keys: []string{"down", "down", "down", "down", "enter"}, want: []string{"job 100009+1 (raw id 100008) · "}},
		{name: "detail_plain", keys: []string{"down", "down", "down", "down", "down", "enter"}, want: []string{"job 100007 · "}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src := &fakeSource{jobs: slurmIDJobs(), user: root.User, admin: true}
			m := New(context.Background(), src, root, Options{NoColor: true, Now: func() time.Time { return testNow }})
			m = drive(t, m, m.Init())
			m = send(t, m, tea.WindowSizeMsg{Width: 100, Height: 16})
			m = press(t, m, tt.keys...)
			out := m.View().Content
			checkFrame(t, out, 100, 16)
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("frame lacks %q:\n%s", w, out)
				}
			}
			golden.RequireEqual(t, out)
		})
	}
}

// The text filter finds a task by its Slurm id.
func TestSlurmIDTextFilter(t *testing.T) {
	root := Identity{User: "root", Admin: true}
	src := &fakeSource{jobs: slurmIDJobs(), user: root.User, admin: true}
	m := New(context.Background(), src, root, Options{NoColor: true, Now: func() time.Time { return testNow }})
	m = drive(t, m, m.Init())
	m = send(t, m, tea.WindowSizeMsg{Width: 100, Height: 16})
	m = press(t, m, "/")
	m = typeText(t, m, "100010_")
	m = press(t, m, "enter")
	var ids []string
	for i := range 5 {
		if r, ok := m.rowAt(i); ok {
			ids = append(ids, r.id)
		}
	}
	if got := strings.Join(ids, " "); got != "100010_1 100010_2 100010_3" {
		t.Errorf("filter 100010_: rows %s, want the three tasks", got)
	}
}
