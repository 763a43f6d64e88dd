package tui

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/internal/present"
)

// maxSummaryJobs bounds the summary's loading: it reads the month's
// newest jobs, at most maxSummaryJobs, and says when it stopped short.
const maxSummaryJobs = 5000

// summaryState is "my summary": this month's numbers for one user (or,
// for an admin looking at everyone, for all).
type summaryState struct {
	who     string    // user, "" for everyone
	month   time.Time // any time in the month shown; [ and ] move it
	loading bool
	err     string
	res     *summaryResult
	scroll  int
}

// summaryResult is what the analysis says about the month's jobs.
type summaryResult struct {
	// notUsed is the one line on a slurm.conf of another cluster left
	// aside (analysis.ConfUse.NotUsed).
	notUsed   string
	window    analysis.Window
	loaded    int
	total     int // jobs the Source selects; more than loaded when truncated
	truncated bool
	head      analysis.Headline
	sum       analysis.ClusterSummary
	topHint   analysis.Hint
	topHintN  int
	// topHintValues is how many different options the top hint's jobs
	// got: a --time or --gres value is each job's own, not one for all.
	topHintValues int
	hinted        int // jobs with at least one hint
	// timeJobs is how many jobs got a --time suggestion from their own
	// run (analysis.HintTimeLimit): each its own value.
	timeJobs int
}

// summaryMsg carries a loaded summary.
type summaryMsg struct {
	who   string
	month time.Time
	res   *summaryResult
	err   error
}

// openSummary shows the month's summary and starts loading it.
func (m Model) openSummary() (tea.Model, tea.Cmd) {
	who := m.id.User
	if m.id.Admin {
		who = m.list.q.user
	}
	m.screen = screenSummary
	m.summary = &summaryState{who: who}
	return m.loadMonth(m.opts.Now())
}

// loadMonth starts loading the summary of the month containing t.
func (m Model) loadMonth(t time.Time) (tea.Model, tea.Cmd) {
	s := m.summary
	s.month, s.loading, s.err, s.scroll = t, true, "", 0
	who, src, ctx, cfg := s.who, m.src, m.ctx, m.cfg
	return m, func() tea.Msg {
		res, err := loadSummary(ctx, src, who, t, cfg)
		return summaryMsg{who: who, month: t, res: res, err: err}
	}
}

// monthOf returns the calendar month containing now, in now's location.
func monthOf(now time.Time) analysis.Window {
	from := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, now.Location())
	return analysis.Window{From: from, To: from.AddDate(0, 1, 0)}
}

// loadSummary reads who's jobs of now's month (at most maxSummaryJobs,
// the newest) through the window pipeline (MonthSource) and summarises
// them with the analysis.
func loadSummary(ctx context.Context, src Source, who string, now time.Time, cfg analysis.Config) (*summaryResult, error) {
	win := monthOf(now)
	ms, ok := src.(MonthSource)
	if !ok {
		return nil, errors.New("this source reads no month's summary")
	}
	in, total, err := ms.Month(ctx, who, win, now, maxSummaryJobs)
	if err != nil {
		return nil, err
	}
	// A summary is of one cluster, counted with its own slurm.conf only.
	var clusters []string
	for i := range in.Jobs {
		if c := in.Jobs[i].Cluster; !slices.Contains(clusters, c) {
			clusters = append(clusters, c)
		}
	}
	if len(clusters) > 1 {
		slices.Sort(clusters)
		return nil, fmt.Errorf("this month's jobs are of %d clusters (%s): a summary is of one; start gpuprof tui --cluster NAME",
			len(clusters), sanitise(strings.Join(clusters, ", ")))
	}
	conf := in.Conf
	jobs := in.Jobs
	res := &summaryResult{
		notUsed:   conf.NotUsed,
		window:    win,
		loaded:    len(jobs),
		total:     max(total, len(jobs)),
		truncated: len(jobs) < total,
		sum:       analysis.SummariseInput(in, cfg),
	}
	res.head = analysis.SummariseWorkload(in, analysis.WorkloadParams{Window: win}, cfg).Headline

	counts := map[string]int{}
	first := map[string]analysis.Hint{}
	values := map[string]map[string]bool{}
	// The month's inventory names the GPU types the hints may suggest.
	types := analysis.GPUTypes(in.Nodes)
	for _, j := range jobs {
		hs := analysis.Hints(j, cfg, types)
		if len(hs) > 0 {
			res.hinted++
		}
		for _, h := range hs {
			counts[h.Rule]++
			if h.Rule == analysis.HintTimeLimit {
				res.timeJobs++
			}
			if values[h.Rule] == nil {
				values[h.Rule] = map[string]bool{}
			}
			values[h.Rule][h.Option] = true
			if _, seen := first[h.Rule]; !seen {
				first[h.Rule] = h
			}
		}
	}
	rules := make([]string, 0, len(counts))
	for r := range counts {
		rules = append(rules, r)
	}
	slices.SortFunc(rules, func(a, b string) int {
		return cmp.Or(cmp.Compare(counts[b], counts[a]), cmp.Compare(a, b))
	})
	if len(rules) > 0 {
		res.topHint, res.topHintN = first[rules[0]], counts[rules[0]]
		res.topHintValues = len(values[rules[0]])
	}
	return res, nil
}

func (m Model) gotSummary(msg summaryMsg) (tea.Model, tea.Cmd) {
	s := m.summary
	if s == nil || s.who != msg.who || !s.month.Equal(msg.month) || !s.loading {
		return m, nil
	}
	s.loading = false
	if msg.err != nil {
		s.err = msg.err.Error()
		m.errMsg = msg.err.Error()
		return m, nil
	}
	m.errMsg = ""
	s.res = msg.res
	return m, nil
}

// summaryView renders the summary.
func (m Model) summaryView() (title string, body []string, status string) {
	s := m.summary
	who := "everyone"
	if s.who != "" {
		who = clip(s.who, 24)
	}
	title = " gpuprof · summary of " + who
	lines := m.summaryLines()
	scroll := max(min(s.scroll, len(lines)-m.bodyHeight()), 0)
	return title, lines[scroll:], " [ ] month · esc back"
}

// summaryLines is the whole summary.
func (m Model) summaryLines() []string {
	s := m.summary
	switch {
	case s.loading:
		return []string{"", " loading " + monthOf(s.month).From.Format("January 2006") + "'s jobs…"}
	case s.err != "":
		return []string{"", " could not load the summary: " + clip(s.err, m.width)}
	}
	r := s.res
	h := &r.head
	out := []string{""}
	add := func(format string, args ...any) { out = append(out, " "+fmt.Sprintf(format, args...)) }
	add("%s (%s to %s)", r.window.From.Format("January 2006"),
		r.window.From.Format("2006-01-02"), r.window.To.AddDate(0, 0, -1).Format("2006-01-02"))
	add("%s jobs, %s with GPUs", present.Int(r.sum.Jobs), present.Int(r.sum.GPUJobs))
	if r.notUsed != "" {
		out = append(out, wrapHanging(sanitise(r.notUsed), m.width)...)
	}
	if r.truncated {
		add("only the newest %s of %s jobs were read", present.Int(r.loaded), present.Int(r.total))
	}
	out = append(out, "")
	add("GPU-hours      %8s", present.GPUHours(h.AllocatedGPUHours))
	if h.MeasuredGPUHours > 0 {
		add("efficiency     %7s%%  (mean utilisation weighted by GPU-hours)", present.WholePercent(h.Utilisation))
		add("idle GPU-hours %8s  (%s%% of measured)", present.GPUHours(h.IdleGPUHours), present.WholePercent(h.IdleGPUHours/h.MeasuredGPUHours))
	} else {
		add("efficiency           -  (no utilisation readings)")
		add("idle GPU-hours       -")
	}
	if h.Coverage > 0 && h.Coverage < 1 {
		add("readings cover %s%% of the GPU-hours", present.WholePercent(h.Coverage))
	}
	out = append(out, "", " "+m.st.render(m.st.header, "Jobs by class"))
	for _, c := range r.sum.ByClass {
		if c.Jobs == 0 {
			continue
		}
		add("%-18s %6s %-6s %9s GPU-hours", c.Class, present.Int(c.Jobs), present.Plural(c.Jobs, "job", "jobs"), present.GPUHours(c.GPUHours))
	}
	if r.timeJobs > 0 {
		out = append(out, "")
		out = append(out, wrapHanging(fmt.Sprintf("--time: %s of %s jobs asked for far more time than they ran; "+
			"the suggested limit is per job (%s its own run), not one value for all: see each job's detail",
			present.Int(r.timeJobs), present.Int(r.loaded), present.Times(analysis.LimitMargin)), m.width)...)
	}
	out = append(out, "", " "+m.st.render(m.st.header, "Most common hint"))
	switch {
	case r.loaded == 0:
		add("none: no jobs this month ([ shows the month before)")
	case r.topHintN == 0:
		add("none: nothing to change")
	default:
		h := r.topHint
		jobs := fmt.Sprintf("%s of %s jobs", present.Int(r.topHintN), present.Int(r.loaded))
		switch {
		case h.Option == "":
			out = append(out, wrapHanging(fmt.Sprintf("  rule %s for %s (no option: see why below)", h.Rule, jobs), m.width)...)
		case r.topHintValues > 1:
			// Each job's value is its own (a --time from its own run): say
			// so rather than offer one job's value for all of them.
			name, _, _ := strings.Cut(h.Option, "=")
			out = append(out, wrapHanging(fmt.Sprintf("  %s for %s (rule %s): a value per job, from its own run, "+
				"not one for all; each job's detail shows its own, for example %s",
				name, jobs, h.Rule, sanitise(h.Option)), m.width)...)
		default:
			out = append(out, wrapHanging(fmt.Sprintf("  %s for %s (rule %s)", sanitise(h.Option), jobs, h.Rule), m.width)...)
		}
		out = append(out, wrapHanging("  for example: "+sanitise(r.topHint.Why), m.width)...)
	}
	return out
}
