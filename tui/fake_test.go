package tui

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/gpu"
	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/store"
)

// testNow is the clock of every test: a Friday in November.
var testNow = time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)

// fakeSource is a working in-memory Source: it filters, sorts, counts and
// pages a slice of jobs the way the store does, and records the pages it
// was asked for.
type fakeSource struct {
	jobs []store.JobView
	// admin false restricts every answer to user, as a Source must.
	user  string
	admin bool
	fail  error

	mu    sync.Mutex
	pages []store.ViewFilter // every Jobs call
	// clusterConf, when set, is the Slurm configuration bound to a
	// cluster's jobs (jobsource.Source.ClusterConf).
	clusterConf func(cluster string) (analysis.ConfUse, []slurmext.NodeGres)
}

var _ Source = (*fakeSource)(nil)

func (s *fakeSource) Jobs(ctx context.Context, f store.ViewFilter) ([]store.JobView, error) {
	s.mu.Lock()
	s.pages = append(s.pages, f)
	s.mu.Unlock()
	if s.fail != nil {
		return nil, s.fail
	}
	vs, err := s.selectJobs(f)
	if err != nil {
		return nil, err
	}
	if f.AfterJobID != "" { // keyset paging: start after that job
		i := slices.IndexFunc(vs, func(v store.JobView) bool { return v.Cluster == f.AfterCluster && v.JobID == f.AfterJobID })
		if i < 0 {
			return nil, fmt.Errorf("page after %s: %w", f.AfterJobID, store.ErrNotFound)
		}
		vs = vs[i+1:]
	}
	off := min(max(f.Offset, 0), len(vs))
	vs = vs[off:]
	if f.Limit > 0 && len(vs) > f.Limit {
		vs = vs[:f.Limit]
	}
	out := make([]store.JobView, len(vs))
	for i, v := range vs {
		out[i] = withoutSeries(v) // pages come without series, as from the store
	}
	return out, nil
}

func (s *fakeSource) Count(ctx context.Context, f store.ViewFilter) (int, error) {
	if s.fail != nil {
		return 0, s.fail
	}
	vs, err := s.selectJobs(f)
	return len(vs), err
}

func (s *fakeSource) Job(ctx context.Context, cluster, jobID string) (store.JobView, error) {
	if s.fail != nil {
		return store.JobView{}, s.fail
	}
	for _, v := range s.jobs {
		if r := v.SchedView(); v.Cluster == cluster && v.JobID == jobID && (s.admin || r != nil && r.User == s.user) {
			return v, nil
		}
	}
	return store.JobView{}, fmt.Errorf("job %s/%s: %w", cluster, jobID, store.ErrNotFound)
}

// Month reads a month as the window pipeline does (monthly.SummaryMonth over
// jobsource's Scope): counted, the newest read, the Slurm configuration
// of their one cluster bound.
func (s *fakeSource) Month(ctx context.Context, user string, w analysis.Window, now time.Time, newest int) (analysis.Input, int, error) {
	f := store.ViewFilter{User: user, Since: w.From, Until: w.To}
	total, err := s.Count(ctx, f)
	if err != nil {
		return analysis.Input{}, 0, fmt.Errorf("count this month's jobs: %w", err)
	}
	f.Limit = min(total, newest)
	vs, err := s.Jobs(ctx, f)
	if err != nil {
		return analysis.Input{}, 0, fmt.Errorf("load this month's jobs: %w", err)
	}
	b := analysis.NewInputBuilder()
	var clusters []string
	for _, v := range vs {
		if !slices.Contains(clusters, v.Cluster) {
			clusters = append(clusters, v.Cluster)
		}
		b.Add(v.Sched, v.Profiles)
	}
	if s.clusterConf != nil && len(clusters) == 1 {
		b.SetConf(s.clusterConf(clusters[0]))
	}
	return b.Input(w, now), total, nil
}

var _ MonthSource = (*fakeSource)(nil)

// calls returns the filters of the Jobs calls so far.
func (s *fakeSource) calls() []store.ViewFilter {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.pages)
}

func withoutSeries(v store.JobView) store.JobView {
	ps := make([]profile.Job, len(v.Profiles))
	for i, p := range v.Profiles {
		p.GPUs = slices.Clone(p.GPUs)
		for k := range p.GPUs {
			p.GPUs[k].Series.Points = nil
		}
		ps[i] = p
	}
	v.Profiles = ps
	return v
}

func (s *fakeSource) selectJobs(f store.ViewFilter) ([]store.JobView, error) {
	desc, ok := store.SortDescending(f.Sort)
	if !ok {
		return nil, fmt.Errorf("sort %q: %w", f.Sort, store.ErrBadFilter)
	}
	var out []store.JobView
	for _, v := range s.jobs {
		r := v.SchedView()
		if r == nil {
			r = &slurmext.JobRecord{}
		}
		switch {
		case !s.admin && r.User != s.user,
			f.User != "" && r.User != f.User,
			f.Account != "" && r.Account != f.Account,
			f.Partition != "" && r.Partition != f.Partition,
			f.Cluster != "" && r.Cluster != f.Cluster,
			f.State != "" && !strings.EqualFold(string(r.State), f.State),
			f.Text != "" && !strings.Contains(strings.ToLower(r.Name+" "+r.JobID+" "+r.DisplayID+" "+r.User+" "+r.Account+" "+r.Partition), strings.ToLower(f.Text)),
			!f.Since.IsZero() && !r.End.IsZero() && r.End.Before(f.Since),
			!f.Until.IsZero() && !r.Start.Before(f.Until):
			continue
		}
		out = append(out, v)
	}
	key := func(v store.JobView) (float64, string) {
		j := analysis.FromView(v.SchedView(), v.Profiles)
		m := analysis.Measure(j, analysis.DefaultConfig())
		switch f.Sort {
		case "", store.SortStart:
			return float64(j.Start.Unix()), ""
		case store.SortID:
			n, _ := strconv.Atoi(j.ID)
			return float64(n), ""
		case store.SortName:
			return 0, strings.ToLower(j.Name)
		case store.SortUser:
			return 0, j.User
		case store.SortState:
			return 0, string(j.State)
		case store.SortElapsed:
			end := j.End
			if end.IsZero() {
				end = f.Now
			}
			return end.Sub(j.Start).Seconds(), ""
		case store.SortGPUs:
			return float64(m.GPUs), ""
		case store.SortVRAM:
			return float64(m.VRAMPeak), ""
		}
		return m.UtilMean, ""
	}
	if f.Asc {
		desc = !desc
	}
	type keyed struct {
		v store.JobView
		n float64
		s string
	}
	ks := make([]keyed, len(out))
	for i, v := range out {
		n, s := key(v)
		ks[i] = keyed{v, n, s}
	}
	slices.SortStableFunc(ks, func(a, b keyed) int {
		c := cmp.Or(cmp.Compare(a.n, b.n), cmp.Compare(a.s, b.s), cmp.Compare(a.v.JobID, b.v.JobID))
		if desc {
			return -c
		}
		return c
	})
	for i, k := range ks {
		out[i] = k.v
	}
	return out, nil
}

// genJobs makes n jobs of alice (and every fifth of bob), newest first,
// three hours apart, with GPUs, series and a mix of states and tasks.
func genJobs(n int) []store.JobView {
	const gib = 1 << 30
	names := []string{"train_resnet50_seed%d", "preprocess_shard%d", "bash", "serve_llm_v%d", "eval_%d"}
	states := []string{"COMPLETED", "COMPLETED", "FAILED", "TIMEOUT", "CANCELLED", "COMPLETED", "OUT_OF_MEMORY"}
	vs := make([]store.JobView, n)
	for i := range n {
		id := strconv.Itoa(100000 + n - i)
		user := "alice"
		if i%5 == 4 {
			user = "bob"
		}
		start := testNow.Add(-time.Hour - time.Duration(i)*3*time.Hour)
		run := time.Duration(20+(i*37)%600) * time.Minute
		end := start.Add(run)
		state := states[i%len(states)]
		if i < 2 {
			state, end = "RUNNING", time.Time{}
		}
		name := names[i%len(names)]
		if strings.Contains(name, "%d") {
			name = fmt.Sprintf(name, i%7)
		}
		ngpu := 1 + i%4
		rec := &slurmext.JobRecord{
			Cluster: "hpc", JobID: id, DisplayID: id, ArrayTaskID: -1, HetOffset: -1,
			Name: name, User: user, UID: 1000, Account: "proj" + strconv.Itoa(i%3),
			Partition: []string{"gpu", "gpu-long"}[i%2], QOS: "normal", State: slurmext.JobState(state),
			Submit: start.Add(-time.Duration(i%11) * 5 * time.Minute), Start: start, End: end,
			TimeLimit: 12 * time.Hour, ReqGPUs: ngpu, NodeCount: 1, CPUs: 8 * ngpu,
		}
		p := profile.Job{
			Key:  profile.Key{Cluster: "hpc", JobID: id, Node: fmt.Sprintf("gpu%02d", i%12)},
			User: user, Account: rec.Account, Partition: rec.Partition,
			Start: start, End: end, Status: profile.StatusFinished, Source: profile.SourceAgent,
			SampleInterval: 10 * time.Second,
			IO:             profile.IOWait{Scope: profile.IOScopeCgroup, StallSeconds: float64(i%9) * run.Seconds() / 30, Seconds: run.Seconds()},
		}
		if end.IsZero() {
			p.Status = profile.StatusRunning
		}
		for g := range ngpu {
			base := uint32((i*13 + g*29) % 100)
			if g == 3 {
				base = 0 // the fourth GPU sits idle
			}
			gp := profile.GPU{
				UUID: fmt.Sprintf("GPU-%08x-1111-2222-3333-444455556666", i*8+g), SlurmIndex: g, Minor: g,
				Model: "NVIDIA H100 80GB HBM3", MemoryTotal: 80 * gib, UtilHist: make([]uint32, 101),
				EnergyJ: float64(300*ngpu) * run.Seconds(), EnergyValid: true, MaxTempC: 60 + uint32(i%20), TempValid: true,
				Series: profile.NewSeries(start, run/48, 64),
			}
			if i%17 == 0 {
				gp.AddXID(79, start.Add(time.Minute))
			}
			gp.AddProcessName("python")
			samples := 48
			for s := range samples {
				u := base
				if base > 0 {
					u = min(base+uint32((s*7)%30), 100)
				}
				mem := uint64(float64(80*gib) * float64((i*7+s)%90+5) / 100 * float64(min(s+1, 10)) / 10)
				if base == 0 {
					mem = 0
				}
				t := start.Add(time.Duration(s) * run / time.Duration(samples))
				gp.Samples++
				gp.UtilSum += uint64(u)
				gp.UtilMax = max(gp.UtilMax, u)
				gp.UtilHist[u]++
				if u == 0 {
					gp.IdleSamples++
				}
				gp.MemSamples++
				gp.MemPeak = max(gp.MemPeak, mem)
				if base > 0 {
					gp.ProcSamples++
				}
				gp.Series.Add(t, gpu.Some(u), gpu.Some(mem))
				if g == 1 && base > 0 {
					// The second GPU of a job has GPM readings (the
					// first's stay unknown, as on a GPU before Hopper).
					gp.Observe(profile.Reading{Time: t, Activity: gpu.Some(gpu.Activity{Interval: run / time.Duration(samples),
						SM: gpu.Some(float64(u) * 0.6), Tensor: gpu.Some(float64(u) * 0.3), DRAM: gpu.Some(float64(u) / 5)})}, run/time.Duration(samples))
				}
			}
			gp.IdleAllocation = gp.ProcSamples == 0
			p.GPUs = append(p.GPUs, gp)
		}
		if i%23 == 0 {
			p.MarkPartial("agent restarted: 12m missing")
		}
		vs[i] = store.JobView{Cluster: "hpc", JobID: id, Sched: rec, Profiles: []profile.Job{p}}
	}
	return vs
}

// newTestModel returns a model over n generated jobs at 80×24, with the
// first page and the count loaded.
func newTestModel(t testing.TB, n int, id Identity, w, h int) (Model, *fakeSource) {
	t.Helper()
	src := &fakeSource{jobs: genJobs(n), user: id.User, admin: id.Admin}
	m := New(context.Background(), src, id, Options{NoColor: true, Now: func() time.Time { return testNow }})
	m = drive(t, m, m.Init())
	m = send(t, m, tea.WindowSizeMsg{Width: w, Height: h})
	return m, src
}

// drive runs cmd and every command its messages lead to, synchronously,
// feeding the messages to m; tea.Quit stops it.
func drive(t testing.TB, m Model, cmd tea.Cmd) Model {
	t.Helper()
	queue := []tea.Cmd{cmd}
	for steps := 0; len(queue) > 0; steps++ {
		if steps > 10000 {
			t.Fatal("commands do not settle")
		}
		c := queue[0]
		queue = queue[1:]
		if c == nil {
			continue
		}
		switch msg := c().(type) {
		case nil:
		case tea.BatchMsg:
			queue = append(queue, msg...)
		case tea.QuitMsg:
			return m
		default:
			next, cmd := m.Update(msg)
			m = next.(Model)
			queue = append(queue, cmd)
		}
	}
	return m
}

// send delivers msg to m and runs what follows.
func send(t testing.TB, m Model, msg tea.Msg) Model {
	t.Helper()
	next, cmd := m.Update(msg)
	return drive(t, next.(Model), cmd)
}

// press sends key presses: names such as "enter", "down", "ctrl+c", or
// single printable characters.
func press(t testing.TB, m Model, keys ...string) Model {
	t.Helper()
	for _, k := range keys {
		m = send(t, m, keyMsg(k))
	}
	return m
}

// typeText types s into the model, one key per character.
func typeText(t testing.TB, m Model, s string) Model {
	t.Helper()
	for _, r := range s {
		m = send(t, m, tea.KeyPressMsg{Code: r, Text: string(r)})
	}
	return m
}

func keyMsg(k string) tea.KeyPressMsg {
	switch k {
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "backspace":
		return tea.KeyPressMsg{Code: tea.KeyBackspace}
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "pgdown":
		return tea.KeyPressMsg{Code: tea.KeyPgDown}
	case "pgup":
		return tea.KeyPressMsg{Code: tea.KeyPgUp}
	case "ctrl+c":
		return tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	case "ctrl+u":
		return tea.KeyPressMsg{Code: 'u', Mod: tea.ModCtrl}
	case "ctrl+d":
		return tea.KeyPressMsg{Code: 'd', Mod: tea.ModCtrl}
	}
	r := []rune(k)
	if len(r) != 1 {
		panic("keyMsg: unknown key " + k)
	}
	return tea.KeyPressMsg{Code: r[0], Text: k}
}
