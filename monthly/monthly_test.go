package monthly

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/capacity"
	"github.com/gpuprof/gpuprof/jobsource"
	"github.com/gpuprof/gpuprof/notice"
	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/report"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/store"
)

// fakeSource holds jobs by month ("2026-11"), and the clusters of a
// month, and records what it was asked: a scope's reads
// (jobsource.Reads).
type fakeSource struct {
	mu       sync.Mutex
	jobs     map[string][]analysis.Job
	notices  []profile.Notice // given to each with the report month's first job
	rows     []notice.Row     // the day's notices (InputAndNotices), newest first
	queries  []jobsource.Query
	counts   []jobsource.Query
	fail     string // a month whose read fails
	clusters []string
	bound    []string
}

func (s *fakeSource) Count(_ context.Context, q jobsource.Query) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.counts = append(s.counts, q)
	return len(s.jobs[q.Window.From.Format("2006-01")]), nil
}

func (s *fakeSource) Input(_ context.Context, q jobsource.Query, _ *jobsource.Conf, each func(*slurmext.JobRecord, []profile.Job)) (analysis.Input, error) {
	s.mu.Lock()
	s.queries = append(s.queries, q)
	s.mu.Unlock()
	m := q.Window.From.Format("2006-01")
	if m == s.fail {
		return analysis.Input{}, errors.New("database is locked")
	}
	jobs := s.jobs[m]
	if each != nil && len(jobs) > 0 {
		each(&slurmext.JobRecord{JobID: jobs[0].ID, User: jobs[0].User}, []profile.Job{{Key: profile.Key{Cluster: "lab", JobID: jobs[0].ID, Node: "gpu01"}, Notices: s.notices}})
	}
	return analysis.Input{Window: q.Window, Jobs: slices.Clone(jobs)}, nil
}

func (s *fakeSource) InputAndNotices(ctx context.Context, q jobsource.Query) (analysis.Input, []notice.Row, error) {
	in, err := s.Input(ctx, q, nil, nil)
	return in, slices.Clone(s.rows), err
}

func (s *fakeSource) Newest(context.Context, jobsource.Query) (time.Time, error) {
	return time.Time{}, nil
}

func (s *fakeSource) Clusters(context.Context, jobsource.Query) ([]string, int, error) {
	if len(s.clusters) == 1 {
		return s.clusters, 7, nil
	}
	return s.clusters, 0, nil
}

func (s *fakeSource) Bind(_ context.Context, _ jobsource.Query, cluster string) (string, *jobsource.Conf, int, error) {
	s.bound = append(s.bound, cluster)
	if cluster == "" {
		cluster = "lab"
	}
	return strings.ToLower(cluster), &jobsource.Conf{Use: analysis.ConfUse{Cluster: cluster}}, 0, nil
}

// annOf is ann's scope over src, read from /db (so scoped to her uid),
// bound to cluster ("": not bound).
func annOf(src *fakeSource, cluster string) jobsource.Scope {
	sc := jobsource.NewScope(store.Caller{UID: 1001, User: "ann"}, "", "/db", src)
	sc.Cluster = cluster
	return sc
}

// progress counts the replay's progress started and stopped.
type progress struct{ started, stopped int }

func (p *progress) Start() (func(capacity.PlanProgress), func()) {
	p.started++
	return nil, func() { p.stopped++ }
}

func month(y int, m time.Month) analysis.Window {
	from := time.Date(y, m, 1, 0, 0, 0, 0, time.UTC)
	return analysis.Window{From: from, To: from.AddDate(0, 1, 0)}
}

func gpuJob(id, user, account string, at time.Time) analysis.Job {
	g := analysis.GPU{Node: "gpu01", Model: "NVIDIA H100 80GB HBM3", UtilMean: 50, UtilMeanValid: true, IdleFraction: 0.5, IdleValid: true}
	return analysis.Job{Cluster: "lab", ID: id, User: user, Account: account, Partition: "gpu", State: "COMPLETED",
		Submit: at, Start: at, End: at.Add(2 * time.Hour), TimeLimit: 4 * time.Hour,
		ReqGPUs: 1, HasGPUData: true, GPUs: []analysis.GPU{g}}
}

// TestBuild: the month is counted once and read once, with its series,
// lean for a reader who is not an admin, sized by the count, the notices
// tallied from the same pass; earlier
// months are read lean and kept when they have jobs, oldest first; the
// title, the sources' notes and the clock are the report's; the plan is
// not simulated for a reader who is not an admin; names are anonymised
// in this month's and the earlier months' jobs alike.
func TestBuild(t *testing.T) {
	nov, oct, aug := month(2026, 11), month(2026, 10), month(2026, 8)
	src := &fakeSource{jobs: map[string][]analysis.Job{
		"2026-11": {gpuJob("11", "alice", "lab", nov.From.Add(24*time.Hour)), gpuJob("12", "bob", "lab", nov.From.Add(48*time.Hour))},
		"2026-10": {gpuJob("10", "carol", "phys", oct.From.Add(24*time.Hour))},
		"2026-08": {gpuJob("8", "dave", "chem", aug.From.Add(24*time.Hour))},
	}, notices: []profile.Notice{{Rule: profile.RuleIdleGPU, Time: nov.From.Add(25 * time.Hour), Status: profile.NoticeSent}}}
	generated := time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)
	prog := &progress{}
	p := Params{Window: nov, Top: 10, Compare: 3, Config: analysis.DefaultConfig(), Progress: prog,
		Now: func() time.Time { return generated }}
	sc := annOf(src, "lab")
	d, err := Build(context.Background(), sc, p)
	if err != nil {
		t.Fatal(err)
	}
	if d.Title != "GPU workload report, November 2026" || d.Month != "2026-11" || d.Cluster != "lab" || !d.Generated.Equal(generated) {
		t.Errorf("title %q, month %q, cluster %q, generated %v", d.Title, d.Month, d.Cluster, d.Generated)
	}
	if d.Workload.Headline.Jobs != 2 || d.Findings.Jobs != nil {
		t.Errorf("workload of %d jobs (want 2), findings keep %d jobs (want none)", d.Workload.Headline.Jobs, len(d.Findings.Jobs))
	}
	if d.Notices.Notices != 1 || d.Notices.Sent != 1 {
		t.Errorf("notices = %+v, want the one sent", d.Notices)
	}
	var earlier []string
	for _, e := range d.Earlier {
		earlier = append(earlier, e.Month)
	}
	if !slices.Equal(earlier, []string{"2026-08", "2026-10"}) {
		t.Errorf("earlier months = %v, want 2026-08 and 2026-10 (September has no jobs)", earlier)
	}
	if d.SimPlan == nil || d.SimPlan.Simulated || !strings.Contains(d.SimPlan.Verdict.Text, "ann sees only their own") || prog.started != 0 || prog.stopped != 0 {
		t.Errorf("plan for a reader who is not an admin = %+v (progress started %d, stopped %d)", d.SimPlan.Verdict, prog.started, prog.stopped)
	}
	if len(d.Sources.Notes) != 2 || d.Sources.Notes[0] != "only the jobs of ann (uid 1001): the reader is not an admin" || d.Sources.Database != "/db" || !strings.HasPrefix(d.Sources.Notes[1], "no GPU inventory:") {
		t.Errorf("notes = %q, want the caller's, then the inventory's", d.Sources.Notes)
	}
	want := []jobsource.Query{
		{Cluster: "lab", Window: nov, WithSeries: true, Lean: true, Jobs: 2},
		{Cluster: "lab", Window: month(2026, 8), Lean: true},
		{Cluster: "lab", Window: month(2026, 9), Lean: true},
		{Cluster: "lab", Window: oct, Lean: true},
	}
	if !slices.Equal(src.queries, want) || len(src.counts) != 1 {
		t.Errorf("queries = %+v, counts %+v; want %+v and one count (the month's)", src.queries, src.counts, want)
	}

	// An admin's month is read in full when the replay can take it, and
	// named in the plan as no one's in particular.
	src.queries, src.counts = nil, nil
	sc.Caller.Admin = true
	p.Compare, p.Anonymize, p.Title = 3, true, "November"
	if d, err = Build(context.Background(), sc, p); err != nil {
		t.Fatal(err)
	}
	if src.queries[0] != (jobsource.Query{Cluster: "lab", Window: nov, WithSeries: true, Jobs: 2}) || len(src.counts) != 1 {
		t.Errorf("an admin's month read as %+v after %d counts, want in full after one", src.queries[0], len(src.counts))
	}
	if d.Title != "November" || !d.Anonymized {
		t.Errorf("title %q, anonymized %v", d.Title, d.Anonymized)
	}
	for _, name := range []string{"alice", "bob", "carol", "dave", "phys", "chem"} {
		for _, u := range d.Workload.Users {
			if u.Name == name {
				t.Errorf("user %q not anonymised", name)
			}
		}
	}

	// An earlier month that cannot be read is the report's error.
	src.fail = "2026-10"
	if _, err := Build(context.Background(), sc, p); err == nil || !strings.HasPrefix(err.Error(), "month 2026-10: ") {
		t.Errorf("err = %v, want it to name the month", err)
	}
}

// A reader who is not an admin gets a plan that is not simulated, and
// says why; so does each recommendation's effect.
func TestPlanNotAdmin(t *testing.T) {
	c := analysis.DefaultConfig()
	f := analysis.Findings{Recommendations: []analysis.Recommendation{{ID: "R1", Effect: "400 idle GPU-hours a month"}}}
	sc := jobsource.NewScope(store.Caller{UID: 1001, User: "ann\x1b[31m"}, "", "", &fakeSource{})
	sp := Plan(analysis.Input{}, &f, sc, c, nil)
	if sp.Simulated || sp.Verdict.Code != capacity.VerdictNotSimulated ||
		!strings.Contains(sp.Verdict.Text, "root and admin_group only") || !strings.Contains(sp.Verdict.Text, "ann") ||
		strings.ContainsRune(sp.Verdict.Text, 0x1b) {
		t.Errorf("plan for a non-admin = %+v, want not simulated, naming root and admin_group and the user (sanitised)", sp.Verdict)
	}
	if e := f.Recommendations[0].Simulated; e == nil || e.Simulated || !strings.Contains(e.Text, "not simulated") {
		t.Errorf("recommendation's effect = %+v, want one saying it is not simulated", e)
	}
}

// TestLastWithJobs: the newest month with jobs, walking back; none in
// three years is an error naming where the search began.
func TestLastWithJobs(t *testing.T) {
	src := &fakeSource{jobs: map[string][]analysis.Job{"2026-08": {gpuJob("8", "dave", "chem", month(2026, 8).From)}}}
	w, err := LastWithJobs(context.Background(), annOf(src, ""), month(2026, 11), "lab")
	if err != nil || w != month(2026, 8) {
		t.Errorf("LastWithJobs = %v, %v; want 2026-08", w, err)
	}
	if len(src.counts) != 4 || src.counts[0].Cluster != "lab" {
		t.Errorf("counts = %+v, want 4 of cluster lab", src.counts)
	}
	if _, err := LastWithJobs(context.Background(), annOf(&fakeSource{}, ""), month(2026, 11), ""); err == nil || !strings.Contains(err.Error(), "up to 2026-11") {
		t.Errorf("no jobs: err = %v", err)
	}
}

// TestBuildGrowthFromHistory: with four whole months of jobs a day
// growing 10 % a month, the report's plan uses the site's own trend
// (about 214 % a year), says so, and takes it from the months table's
// GPU-hours (a day: 31 and 30-day months alternate); with
// two months it uses the configured default and says so; a growth set in
// the configuration wins over the trend.
func TestBuildGrowthFromHistory(t *testing.T) {
	jobs := map[string][]analysis.Job{}
	for k := range 4 {
		w := month(2026, time.Month(8+k))
		n := int(math.Round(10 * w.To.Sub(w.From).Hours() / 24 * math.Pow(1.1, float64(k))))
		for i := range n {
			jobs[w.From.Format("2006-01")] = append(jobs[w.From.Format("2006-01")], gpuJob(fmt.Sprintf("%d-%d", k, i), "ann", "bio", w.From.Add(time.Hour+time.Duration(i)*time.Minute)))
		}
	}
	build := func(t *testing.T, c analysis.Config, compare int) report.Data {
		t.Helper()
		d, err := Build(context.Background(), annOf(&fakeSource{jobs: jobs}, "lab"), Params{Window: month(2026, 11), Top: 10, Compare: compare, Config: c})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	d := build(t, analysis.DefaultConfig(), 6)
	g := d.SimPlan.GrowthEstimate
	if g == nil || g.Source != "history" || math.Abs(g.Used-(math.Pow(1.1, 12)-1)) > 0.05 || d.SimPlan.Growth != g.Used || d.Findings.Plan.Params.Growth != g.Used {
		t.Fatalf("growth %+v, the plan's %v, Little's law's %v: want the trend, 1.1^12 − 1, in both", g, d.SimPlan.Growth, d.Findings.Plan.Params.Growth)
	}
	if len(g.Months) != 4 || !strings.Contains(g.Text, "from 4 whole months") || !strings.Contains(g.Text, "2026-08 to 2026-11") {
		t.Errorf("months %+v, text %q", g.Months, g.Text)
	}
	for i, e := range d.Earlier {
		if g.Months[i].Month != e.Month || g.Months[i].GPUHours != e.Headline.AllocatedGPUHours {
			t.Errorf("month %d: plan %+v, months table %s %v", i, g.Months[i], e.Month, e.Headline.AllocatedGPUHours)
		}
	}
	if g.Months[3].GPUHours != d.Workload.Headline.AllocatedGPUHours {
		t.Errorf("this month: plan %v, headline %v", g.Months[3].GPUHours, d.Workload.Headline.AllocatedGPUHours)
	}

	d = build(t, analysis.DefaultConfig(), 1)
	if g := d.SimPlan.GrowthEstimate; g.Source != "default" || g.Used != 0.3 || !strings.Contains(g.Text, "2 whole months") {
		t.Errorf("two months: %+v", g)
	}

	c, err := analysis.ParseConfig([]byte("[plan]\ngrowth = 0.1\n"), "a.toml")
	if err != nil {
		t.Fatal(err)
	}
	d = build(t, c, 6)
	if g := d.SimPlan.GrowthEstimate; g.Source != "configured" || g.Used != 0.1 || d.SimPlan.Growth != 0.1 || !strings.Contains(g.Text, "as configured") {
		t.Errorf("configured: %+v", g)
	}
}

// TestDefaultWindow: with no window given, the last complete month with
// jobs (the report's), walking back past an idle one; with no complete
// month holding jobs (only this month's), the data's span, said (issue
// #38: plan and the report read one window).
func TestDefaultWindow(t *testing.T) {
	now := time.Date(2026, 12, 6, 20, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name     string
		jobs     map[string][]analysis.Job
		want     analysis.Window
		wantRule analysis.WindowRule
	}{
		{"last month", map[string][]analysis.Job{"2026-11": {gpuJob("1", "ann", "bio", month(2026, 11).From)}, "2026-12": {gpuJob("2", "ann", "bio", now)}},
			month(2026, 11), analysis.WindowLastMonth},
		{"an idle month walked past", map[string][]analysis.Job{"2026-09": {gpuJob("1", "ann", "bio", month(2026, 9).From)}},
			month(2026, 9), analysis.WindowLastMonth},
		{"only this month", map[string][]analysis.Job{"2026-12": {gpuJob("2", "ann", "bio", now)}},
			analysis.Window{}, analysis.WindowDataSpan},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, rule, err := DefaultWindow(context.Background(), annOf(&fakeSource{jobs: tc.jobs}, ""), now, "lab")
			if err != nil || w != tc.want || rule != tc.wantRule {
				t.Errorf("DefaultWindow = %v, %q, %v; want %v, %q", w, rule, err, tc.want, tc.wantRule)
			}
		})
	}
}
