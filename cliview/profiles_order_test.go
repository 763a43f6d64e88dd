package cliview

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/slurmext"
)

// orderMonth is a month of jobs of every kind the profiles count (whole
// GPUs and shards, finished and still running, with readings and
// without, runs of one task at the same second under two accounts) and
// one planted task: a 500-hour run on two GPUs and five 6-minute runs on
// one, 1,000.5 GPU-hours exactly. Added up as float64 hours, that task is
// 1,000.5000000000001 when the long run comes first (written "1,001") and
// 1,000.5 when it comes last ("1,000", to the even hour).
func orderMonth() []analysis.Job {
	t0 := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	r := rand.New(rand.NewPCG(41, 7))
	users := []string{"ann", "bob", "cy", "dee"}
	names := []string{"train", "sweep", "eval", "infer", "prep", "bench"}
	parts := []string{"gpu", "long", "debug"}
	states := []slurmext.JobState{slurmext.StateCompleted, slurmext.StateCompleted, slurmext.StateCompleted,
		slurmext.StateFailed, slurmext.StateTimeout, slurmext.StateRunning}
	var jobs []analysis.Job
	id := 1000
	add := func(j analysis.Job) {
		id++
		j.Cluster, j.ID = "c", fmt.Sprint(id)
		if j.Submit.IsZero() {
			j.Submit = j.Start
		}
		jobs = append(jobs, j)
	}
	for range 400 {
		start := t0.Add(time.Duration(r.IntN(25*24*3600)) * time.Second)
		run := time.Duration(1+r.IntN(20*3600)) * time.Second
		j := analysis.Job{User: users[r.IntN(len(users))], Name: names[r.IntN(len(names))], Account: "lab",
			Partition: parts[r.IntN(len(parts))], State: states[r.IntN(len(states))], Start: start,
			TimeLimit: 24 * time.Hour, ExitKnown: true}
		if j.State != slurmext.StateRunning {
			j.End = start.Add(run)
		}
		if j.State == slurmext.StateFailed {
			j.ExitStatus = 1
		}
		if r.IntN(5) == 0 {
			j.ReqShards = 1 + r.IntN(5) // shards of one GPU: a share of 1/8 to 5/8
		} else {
			j.ReqGPUs = 1 + r.IntN(8)
		}
		if r.IntN(2) == 0 {
			for range max(j.ReqGPUs, 1) {
				u := float64(r.IntN(100))
				j.GPUs = append(j.GPUs, analysis.GPU{Node: "n1", UtilMean: u, UtilMeanValid: true,
					MemoryTotal: 80 << 30, VRAMPeak: uint64(r.IntN(80)) << 30, VRAMPeakValid: true})
			}
			j.HasGPUData = true
		}
		add(j)
	}
	// Two runs of one task at the same second under two accounts: the
	// task's account is the first listed, whatever came first.
	for _, acct := range []string{"zeta", "alpha"} {
		add(analysis.Job{User: "eve", Name: "twin", Account: acct, Partition: "gpu", State: "COMPLETED",
			Start: t0.Add(48 * time.Hour), End: t0.Add(50 * time.Hour), ExitKnown: true, ReqGPUs: 1})
	}
	add(analysis.Job{User: "pat", Name: "planted", Account: "lab", Partition: "gpu", State: "COMPLETED",
		Start: t0, End: t0.Add(500 * time.Hour), ExitKnown: true, ReqGPUs: 2, TimeLimit: 600 * time.Hour})
	for k := range 5 {
		s := t0.Add(time.Duration(k+1) * 24 * time.Hour)
		add(analysis.Job{User: "pat", Name: "planted", Account: "lab", Partition: "gpu", State: "COMPLETED",
			Start: s, End: s.Add(6 * time.Minute), ExitKnown: true, ReqGPUs: 1, TimeLimit: time.Hour})
	}
	return jobs
}

// profilesOutput is `gpuprof profiles` and `gpuprof profiles --json` of
// jobs, in the order given, over October 2026.
func profilesOutput(t *testing.T, jobs []analysis.Job) (p ProfilesJSON, text, js string) {
	t.Helper()
	from := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	to := from.AddDate(0, 1, 0)
	in := analysis.Input{Jobs: jobs, Window: analysis.Window{From: from, To: to}, Now: from.Add(27 * 24 * time.Hour)}
	f, err := analysis.Analyse(in, analysis.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	p = ToProfilesJSON(f, analysis.ConfUse{})
	var tb, jb bytes.Buffer
	if err := WriteProfiles(&tb, p, 5); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(&jb, p); err != nil {
		t.Fatal(err)
	}
	return p, tb.String(), jb.String()
}

// The same jobs in any order give the same profiles, byte for byte, text
// and JSON (issue #41: the store reads a large window with two readers,
// so the jobs come in a different order each run). Fails on the float
// sums of GPU-hours: the planted task is written "1,001" or "1,000"
// GPU-hours by the order.
func TestProfilesSameInEveryOrder(t *testing.T) {
	jobs := orderMonth()
	p, wantText, wantJSON := profilesOutput(t, jobs)
	for _, tp := range p.Profiles {
		switch {
		case tp.Name == "planted" && tp.GPUHours != 1000.5:
			t.Errorf("planted task: %.17g GPU-hours, want 1000.5", tp.GPUHours)
		case tp.Name == "twin" && tp.Account != "zeta":
			t.Errorf("twin task: account %q, want zeta (job 1401, listed before alpha's 1402)", tp.Account)
		}
	}
	if !regexp.MustCompile(`(?m)^pat +planted +long_training +6 +1,000 `).MatchString(wantText) {
		t.Errorf("no row: pat planted long_training 6 1,000 (1,000.5 GPU-hours to the even hour):\n%s", wantText)
	}
	// The planted task's long run last, then first: the two float sums.
	n := len(jobs)
	reversed := append(append([]analysis.Job(nil), jobs[n-5:]...), jobs[:n-5]...)
	orders := [][]analysis.Job{reversed}
	r := rand.New(rand.NewPCG(1, 2))
	for range 40 {
		js := append([]analysis.Job(nil), jobs...)
		r.Shuffle(len(js), func(a, b int) { js[a], js[b] = js[b], js[a] })
		orders = append(orders, js)
	}
	for i, js := range orders {
		_, text, j := profilesOutput(t, js)
		if text != wantText {
			t.Errorf("order %d: text differs from the jobs' own order:\n%s", i, lineDiff(wantText, text))
		}
		if j != wantJSON {
			t.Errorf("order %d: JSON differs from the jobs' own order:\n%s", i, lineDiff(wantJSON, j))
		}
	}
}

// lineDiff lists the lines of got that differ from want's at the same
// place, and those one has beyond the other.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for i, wl := range w {
		switch {
		case i >= len(g):
			fmt.Fprintf(&b, "-%s\n", wl)
		case wl != g[i]:
			fmt.Fprintf(&b, "-%s\n+%s\n", wl, g[i])
		}
	}
	for _, gl := range g[min(len(w), len(g)):] {
		fmt.Fprintf(&b, "+%s\n", gl)
	}
	return b.String()
}
