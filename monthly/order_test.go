package monthly

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/cliview"
	"github.com/gpuprof/gpuprof/jobsource"
	"github.com/gpuprof/gpuprof/notice"
	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/report"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/store"
)

// orderReads hands over the jobs of one month in the order jobs holds
// them, with an inventory: a store that reads a large window with two
// readers hands it over in a different order each run.
type orderReads struct {
	nodes []analysis.Node
	jobs  []analysis.Job
	now   time.Time
}

func (r *orderReads) Count(context.Context, jobsource.Query) (int, error) { return len(r.jobs), nil }

func (r *orderReads) Input(_ context.Context, q jobsource.Query, _ *jobsource.Conf, _ func(*slurmext.JobRecord, []profile.Job)) (analysis.Input, error) {
	if q.Window.From.Month() != r.now.Month() {
		return analysis.Input{Window: q.Window, Now: r.now}, nil // no earlier months
	}
	return analysis.Input{Window: q.Window, Now: r.now, Nodes: slices.Clone(r.nodes), Jobs: slices.Clone(r.jobs)}, nil
}

func (r *orderReads) InputAndNotices(ctx context.Context, q jobsource.Query) (analysis.Input, []notice.Row, error) {
	in, err := r.Input(ctx, q, nil, nil)
	return in, nil, err
}

func (r *orderReads) Newest(context.Context, jobsource.Query) (time.Time, error) {
	return r.now, nil
}

func (r *orderReads) Clusters(context.Context, jobsource.Query) ([]string, int, error) {
	return []string{"lab"}, len(r.jobs), nil
}

func (r *orderReads) Bind(context.Context, jobsource.Query, string) (string, *jobsource.Conf, int, error) {
	return "lab", &jobsource.Conf{Use: analysis.ConfUse{Cluster: "lab"}}, len(r.jobs), nil
}

// orderedMonth is a month of jobs of every kind the report and
// recommend sum (whole GPUs and shards, every outcome, readings with
// energy, activity, preallocated and idle GPUs, and jobs without),
// with random fractional readings, so that a float sum in the jobs'
// order differs in its last digits from one order to the next.
func orderedMonth(w analysis.Window) ([]analysis.Node, []analysis.Job) {
	r := rand.New(rand.NewPCG(41, 5))
	models := []struct {
		name string
		mem  uint64
	}{{"NVIDIA H100 80GB HBM3", 80 << 30}, {"NVIDIA A100-SXM4-40GB", 40 << 30}}
	var nodes []analysis.Node
	for i := range 8 {
		m := models[i%2]
		nodes = append(nodes, analysis.Node{Name: fmt.Sprintf("n%d", i), GPUModel: m.name, GPUs: 8, MemoryTotal: m.mem, Shards: 64,
			Partitions: []string{[]string{"gpu", "long"}[i%2]}})
	}
	users := []string{"ann", "bob", "cy", "dee", "eve", "fay"}
	accounts := []string{"lab", "phys", "chem"}
	names := []string{"train", "sweep", "eval", "infer", "prep"}
	states := []slurmext.JobState{slurmext.StateCompleted, slurmext.StateCompleted, slurmext.StateCompleted,
		slurmext.StateFailed, slurmext.StateTimeout, slurmext.StateCancelled, slurmext.StateRunning, slurmext.StateOutOfMemory}
	var jobs []analysis.Job
	for id := range 500 {
		submit := w.From.Add(time.Duration(r.IntN(26*24*3600)) * time.Second)
		start := submit.Add(time.Duration(r.IntN(6*3600)) * time.Second)
		nd := nodes[r.IntN(len(nodes))]
		j := analysis.Job{Cluster: "lab", ID: fmt.Sprint(5000 + id), User: users[r.IntN(len(users))], Account: accounts[r.IntN(len(accounts))],
			Name: names[r.IntN(len(names))], Partition: nd.Partitions[0], State: states[r.IntN(len(states))],
			Submit: submit, Start: start, TimeLimit: time.Duration(1+r.IntN(48)) * time.Hour, ExitKnown: true, NodeCount: 1, NodeList: nd.Name}
		if j.State != slurmext.StateRunning {
			j.End = start.Add(time.Duration(60+r.IntN(30*3600)) * time.Second)
		}
		if j.State == slurmext.StateFailed {
			j.ExitStatus = 1
		}
		if r.IntN(6) == 0 {
			j.ReqShards = 1 + r.IntN(20)
		} else {
			j.ReqGPUs = 1 + r.IntN(8)
		}
		if r.IntN(4) != 0 {
			j.HasGPUData = true
			j.IOWait, j.IOWaitValid = r.Float64()*0.3, true
			for k := range max(j.ReqGPUs, 1) {
				util := r.Float64() * 100
				g := analysis.GPU{Node: nd.Name, UUID: fmt.Sprintf("GPU-%s-%d", nd.Name, k), Model: nd.GPUModel, MemoryTotal: nd.MemoryTotal,
					VRAMPeak: uint64(r.Float64() * float64(nd.MemoryTotal)), VRAMPeakValid: true,
					UtilMean: util, UtilMeanValid: true, UtilP50: util * 0.9, UtilP95: min(100, util*1.3), UtilPctValid: true,
					UtilMax: min(100, util*1.5), UtilMaxValid: true, IdleFraction: r.Float64(), IdleValid: true,
					EnergyJ: r.Float64() * 5e6, EnergyValid: true, Preallocated: r.IntN(8) == 0, IdleAllocation: r.IntN(20) == 0,
					Shared: j.ReqShards > 0}
				g.VRAMFloor, g.VRAMFloorValid = g.VRAMPeak/2, true
				if r.IntN(2) == 0 {
					g.SMMean, g.SMP95, g.TensorMean, g.DRAMMean = util*0.6, util*0.8, util*0.2, util*0.3
					g.ActivitySeconds, g.ActivityValid, g.ActivityScope = 600, true, profile.ActivityScopeGPU
				}
				j.GPUs = append(j.GPUs, g)
			}
		}
		jobs = append(jobs, j)
	}
	return nodes, jobs
}

// orderOutputs is the monthly report (HTML, Markdown, JSON) and
// recommend (text, JSON) of reads, as an admin would get them without the
// replay (whose own order is the queue's).
func orderOutputs(t *testing.T, reads *orderReads, w analysis.Window) map[string]string {
	t.Helper()
	ctx := context.Background()
	c := analysis.DefaultConfig()
	sc := jobsource.NewScope(store.Caller{UID: 1001, User: "ann"}, "", "/db", reads)
	sc, err := sc.Bind(ctx, jobsource.Query{Window: w}, "lab")
	if err != nil {
		t.Fatal(err)
	}
	d, err := Build(ctx, sc, Params{Window: w, Cluster: "lab", Top: 4, Compare: 1, Config: c,
		Carbon: &analysis.Carbon{Fixed: 300, Source: "fixed 300 gCO2e/kWh"}, Now: func() time.Time { return reads.now }})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	var b bytes.Buffer
	for _, f := range []struct {
		name  string
		write func(*bytes.Buffer, report.Data) error
	}{
		{"report.html", func(b *bytes.Buffer, d report.Data) error { return report.WriteHTML(b, d) }},
		{"report.md", func(b *bytes.Buffer, d report.Data) error { return report.WriteMarkdown(b, d) }},
		{"report.json", func(b *bytes.Buffer, d report.Data) error { return report.WriteJSON(b, d) }},
	} {
		b.Reset()
		if err := f.write(&b, d); err != nil {
			t.Fatal(err)
		}
		out[f.name] = b.String()
	}
	a, err := Analyse(ctx, sc, Ask{Window: w, Cluster: "lab"}, c)
	if err != nil {
		t.Fatal(err)
	}
	b.Reset()
	cliview.WriteRecommendations(&b, a.Input, a.Findings, nil)
	out["recommend"] = b.String()
	b.Reset()
	if err := cliview.WriteJSON(&b, cliview.ToRecommendJSON(a.Input, a.Findings)); err != nil {
		t.Fatal(err)
	}
	out["recommend.json"] = b.String()
	return out
}

// TestOutputsSameInEveryOrder: the report (HTML, Markdown, JSON) and
// recommend (text, JSON) of a month are byte-identical in every order
// of its jobs (issue #41's byte-identical check: the store reads a
// large window with two readers, so the jobs come in a different order
// each run). Fails on float sums in the jobs' order: used and idle
// GPU-hours, energy, the users' and accounts' hours, the recommendations'
// evidence.
func TestOutputsSameInEveryOrder(t *testing.T) {
	w := month(2026, 11)
	nodes, jobs := orderedMonth(w)
	reads := &orderReads{nodes: nodes, jobs: jobs, now: w.From.Add(27 * 24 * time.Hour)}
	want := orderOutputs(t, reads, w)
	r := rand.New(rand.NewPCG(3, 4))
	for k := range 6 {
		reads.jobs = slices.Clone(jobs)
		if k == 0 {
			slices.Reverse(reads.jobs)
		} else {
			r.Shuffle(len(reads.jobs), func(a, b int) { reads.jobs[a], reads.jobs[b] = reads.jobs[b], reads.jobs[a] })
		}
		got := orderOutputs(t, reads, w)
		for _, name := range slices.Sorted(func(yield func(string) bool) {
			for n := range want {
				if !yield(n) {
					return
				}
			}
		}) {
			if got[name] != want[name] {
				t.Errorf("order %d: %s differs from the jobs' own order:\n%s", k, name, firstDiffs(want[name], got[name], 8))
			}
		}
	}
}

// firstDiffs lists the first n lines of got that differ from want's at
// the same place.
func firstDiffs(want, got string, n int) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for i := 0; i < len(w) && i < len(g) && n > 0; i++ {
		if w[i] != g[i] {
			fmt.Fprintf(&b, "-%s\n+%s\n", short(w[i]), short(g[i]))
			n--
		}
	}
	if len(w) != len(g) {
		fmt.Fprintf(&b, "(%d lines, want %d)\n", len(g), len(w))
	}
	return b.String()
}

func short(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}
