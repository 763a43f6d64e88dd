package tui

import (
	"fmt"
	"strings"
	"time"
	"unicode"

	tea "charm.land/bubbletea/v2"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/internal/present"
	"github.com/gpuprof/gpuprof/internal/spark"
	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/store"
)

// taskRunsLimit bounds the runs loaded for a job's task profile.
const taskRunsLimit = 200

// detailState is the job detail: the job with its series, analysed once
// when it arrives, and the profile of its recurring task, which follows.
type detailState struct {
	r       row // the list's row, shown while loading
	loading bool
	err     string

	v     store.JobView
	found analysis.Sheet // the job's fact sheet, as gpuprof show draws it

	taskLoading bool
	taskErr     string
	task        *taskInfo

	scroll int
}

// taskInfo is the profile of the task a job belongs to.
type taskInfo struct {
	name      string // normalised
	profile   analysis.TaskProfile
	truncated bool // the run limit was reached: older runs left out
	none      string
}

// detailMsg carries a loaded and analysed job.
type detailMsg struct {
	cluster, jobID string
	d              *detailState
	err            error
}

// taskMsg carries a job's task profile.
type taskMsg struct {
	cluster, jobID string
	task           *taskInfo
	err            error
}

// openDetail shows row r's job and starts loading it.
func (m Model) openDetail(r row) (tea.Model, tea.Cmd) {
	m.screen = screenDetail
	m.detail = &detailState{r: r, loading: true}
	src, ctx, cfg := m.src, m.ctx, m.cfg
	return m, func() tea.Msg {
		v, err := src.Job(ctx, r.cluster, r.jobID)
		if err != nil {
			return detailMsg{cluster: r.cluster, jobID: r.jobID, err: err}
		}
		var types []analysis.GPUType
		if ts, ok := src.(TypeSource); ok {
			types = ts.GPUTypes(ctx, r.cluster)
		}
		return detailMsg{cluster: r.cluster, jobID: r.jobID, d: analyseDetail(r, v, cfg, types)}
	}
}

// analyseDetail runs the analysis of one job for the detail view; types
// are its cluster's GPU types (nil: none known).
func analyseDetail(r row, v store.JobView, cfg analysis.Config, types []analysis.GPUType) *detailState {
	return &detailState{r: r, v: v, found: analysis.ExamineView(v.SchedView(), v.Profiles, cfg, types), taskLoading: true}
}

func (m Model) gotDetail(msg detailMsg) (tea.Model, tea.Cmd) {
	d := m.detail
	if d == nil || d.r.cluster != msg.cluster || d.r.jobID != msg.jobID {
		return m, nil // the user moved on
	}
	if msg.err != nil {
		d.loading = false
		d.err = msg.err.Error()
		m.errMsg = "load job " + sanitise(d.r.id) + ": " + msg.err.Error()
		return m, nil
	}
	m.errMsg = ""
	m.detail = msg.d
	return m, m.loadTask(msg.d.found.Job)
}

// loadTask returns the command that loads the other runs of j's task (same
// user, same normalised name or same array) and profiles them.
func (m Model) loadTask(j analysis.Job) tea.Cmd {
	src, ctx, cfg := m.src, m.ctx, m.cfg
	norm := analysis.NormaliseName(j.Name)
	return func() tea.Msg {
		done := func(t *taskInfo, err error) tea.Msg {
			return taskMsg{cluster: j.Cluster, jobID: j.ID, task: t, err: err}
		}
		if norm == "" && j.ArrayJobID == "" {
			return done(&taskInfo{none: "no recurring task: the job name has no words"}, nil)
		}
		vs, err := src.Jobs(ctx, store.ViewFilter{
			Cluster: j.Cluster, User: j.User, Text: namePrefix(j.Name), Limit: taskRunsLimit,
		})
		if err != nil {
			return done(nil, err)
		}
		var runs []analysis.Job
		for _, v := range vs {
			r := analysis.FromView(v.SchedView(), v.Profiles)
			if (norm != "" && analysis.NormaliseName(r.Name) == norm) ||
				(j.ArrayJobID != "" && r.ArrayJobID == j.ArrayJobID) {
				runs = append(runs, r)
			}
		}
		t := &taskInfo{name: norm, truncated: len(vs) == taskRunsLimit}
		ps := analysis.Profiles(runs, cfg)
		switch {
		case len(ps) == 0:
			t.none = "no other GPU runs of this task"
		default:
			t.profile = ps[0]
			for _, p := range ps {
				if p.Name == norm {
					t.profile = p
					break
				}
			}
		}
		return done(t, nil)
	}
}

// namePrefix is the text the task's runs are searched by: the name's
// leading letters ("train" of "train_resnet50_seed3"), which every name
// that normalises alike shares unless it starts with a separator or digit.
func namePrefix(name string) string {
	end := 0
	for i, r := range name {
		if !unicode.IsLetter(r) {
			break
		}
		end = i + len(string(r))
	}
	return name[:end]
}

func (m Model) gotTask(msg taskMsg) (tea.Model, tea.Cmd) {
	d := m.detail
	if d == nil || d.v.Cluster != msg.cluster || d.found.Job.ID != msg.jobID {
		return m, nil
	}
	d.taskLoading = false
	if msg.err != nil {
		d.taskErr = msg.err.Error()
		return m, nil
	}
	d.task = msg.task
	return m, nil
}

// detailView renders the job detail, scrolled.
func (m Model) detailView() (title string, body []string, status string) {
	d := m.detail
	title = " gpuprof · job " + clip(d.r.id, 24) + " · " + clip(d.r.name, max(m.width/2, 10))
	lines := m.detailLines()
	n := m.bodyHeight()
	scroll := max(min(d.scroll, len(lines)-n), 0)
	end := min(scroll+n, len(lines))
	status = " esc back"
	if len(lines) > n {
		status = " lines " + present.Int(scroll+1) + "–" + present.Int(end) + " of " + present.Int(len(lines)) + " · esc back"
	}
	return title, lines[scroll:end], status
}

// detailLines is the whole detail, wrapped to the screen's width.
//
// It reads top to bottom as the screen shows the detail, section by
// section, each a few add calls on the same wrapped lines; the larger
// pieces (headLines, gpuLines, noticeLines, taskLines) are their own.
func (m Model) detailLines() []string {
	d := m.detail
	w := m.width
	var out []string
	add := func(s string) { out = append(out, wrapHanging(s, w)...) }
	section := func(s string) {
		out = append(out, "", " "+m.st.render(m.st.header, s))
	}
	if d.loading {
		add("loading job " + d.r.id + "…")
		return out
	}
	if d.err != "" {
		add("could not load job " + d.r.id + ": " + sanitise(d.err))
		return out
	}
	j, mt := &d.found.Job, &d.found.Metrics
	loc := m.opts.Now().Location()
	for _, l := range m.headLines(d, loc) {
		add(l)
	}

	section("Analysis")
	cls := "class " + d.found.Class.String()
	if len(d.found.Why) > 0 {
		cls += ": " + sanitise(d.found.Why[0].String())
	}
	add(cls)
	if len(d.found.Bottlenecks) == 0 {
		add("no bottleneck found")
	}
	for _, b := range d.found.Bottlenecks {
		add("bottleneck " + b.Kind.String() + ": " + sanitise(b.Reason.String()))
	}
	io := "IO wait not measured"
	if mt.IOWaitValid {
		io = fmt.Sprintf("IO wait %s of wall time (measured per %s)", present.Percent(mt.IOWait), sanitise(mt.IOScope))
	}
	if mt.EnergyValid {
		io += " · energy " + present.Energy(mt.EnergyJ)
	}
	add(io)
	for _, f := range d.found.Flags {
		add("flag: " + f) // clean: analysis.Sheet.Flags
	}
	if n := mt.Notes.Total(); n > 0 {
		add(present.Count(n, "reading", "readings") + " ignored as impossible")
	}

	if notices := noticeLines(d.found.Nodes, loc); len(notices) > 0 {
		section("Notices")
		for _, l := range notices {
			add(l)
		}
	}

	section("GPUs (" + present.Int(len(j.GPUs)) + ")")
	if len(j.GPUs) == 0 {
		add("no GPU profile recorded")
	}
	for _, ns := range d.found.Nodes {
		for k := range ns.GPUs {
			out = append(out, m.gpuLines(ns.Profile.Node, &ns.GPUs[k])...)
		}
	}

	section("Hints")
	if len(d.found.Hints) == 0 {
		add("none: nothing to change")
	}
	for _, h := range d.found.Hints {
		if h.Option == "" { // not an option: why says what to do
			add("• " + sanitise(h.Why))
			continue
		}
		add("• " + sanitise(h.Option))
		if h.Why != "" {
			add("  " + sanitise(h.Why))
		}
	}

	section("Task profile")
	switch {
	case d.taskLoading:
		add("loading the other runs…")
	case d.taskErr != "":
		add("could not load the other runs: " + sanitise(d.taskErr))
	case d.task == nil:
	case d.task.none != "":
		add(d.task.none)
	default:
		for _, l := range taskLines(d.task) {
			add(l)
		}
	}
	return out
}

// headLines are the detail's first lines, before its sections: the
// job's ids and name, user, account and partition, state, times, and
// its GPUs requested, held and used. Instants are in loc.
func (m Model) headLines(d *detailState, loc *time.Location) []string {
	j, mt := &d.found.Job, &d.found.Metrics
	var out []string
	// The Slurm id, and the raw id the nodes, cgroups and logs know.
	head := "job " + sanitise(d.v.SlurmID())
	if d.v.SlurmID() != d.v.JobID {
		head += " (raw id " + sanitise(d.v.JobID) + ")"
	}
	out = append(out, head+" · "+present.OrMissing(sanitise(j.Name)))
	out = append(out, fmt.Sprintf("user %s · account %s · partition %s",
		present.OrMissing(sanitise(j.User)), present.OrMissing(sanitise(j.Account)), present.OrMissing(sanitise(j.Partition))))
	state := present.OrMissing(sanitise(string(j.State)))
	if j.ExitKnown {
		state += fmt.Sprintf(" · exit %d:%d", j.ExitStatus, j.ExitSignal)
	}
	out = append(out, "state "+state+" · "+mt.Outcome.String())
	times := "start" + nbsp + slurmext.FormatTime(j.Start, loc) + " · end" + nbsp + slurmext.FormatTime(j.End, loc)
	if mt.ElapsedValid {
		times += " · elapsed" + nbsp + present.Duration(mt.Elapsed)
	} else if !j.Start.IsZero() && !mt.Outcome.Finished() {
		times += " · running" + nbsp + present.Duration(m.opts.Now().Sub(j.Start))
	}
	if mt.WaitValid {
		times += " · wait" + nbsp + present.Duration(mt.Wait)
	}
	if j.TimeLimit > 0 {
		times += " · limit" + nbsp + present.Duration(j.TimeLimit)
	}
	out = append(out, times)
	// Held/used and utilisation: the figures every page shows (analysis.Shown).
	shown := mt.Shown()
	gpus := "GPUs " + present.Int(j.ReqGPUs) + " requested"
	if shown.Shards > 0 {
		gpus += ", " + present.Count(shown.Shards, "shard", "shards")
	}
	gpus += " · held/used" + nbsp + present.GPUs(shown.GPUs, shown.Used, shown.UsedKnown)
	if shown.UtilKnown {
		gpus += " · util" + nbsp + present.Util(shown.Util) + "%"
	}
	if mt.ElapsedValid {
		gpus += " · " + present.GPUHours(mt.GPUHours) + " GPU-hours"
	}
	out = append(out, gpus)
	return out
}

// noticeLines are the notices the agents decided for the job while it
// ran, node by node and oldest first, in the words gpuprof show uses
// (analysis.NoticeLine: "notice sent 2026-12-03T14:02:11: GPU 1 idle for
// 45 min: …", "notice not sent … (daily cap): …"), each with the sbatch
// option that would avoid it; the node is named when the job ran on
// several. Instants are in loc.
func noticeLines(nodes []analysis.NodeSheet, loc *time.Location) []string {
	var out []string
	for _, ns := range nodes {
		for _, n := range ns.Notices {
			l := "• " + analysis.NoticeLine(n, loc)
			if len(nodes) > 1 {
				l = "• " + ns.Profile.Node + ": " + analysis.NoticeLine(n, loc)
			}
			out = append(out, sanitise(l))
			if n.Fix != "" {
				out = append(out, "  next time: "+sanitise(n.Fix))
			}
		}
	}
	return out
}

// gpuLines are the lines of one GPU of the job's fact sheet on node:
// where it is, its sparklines over the job's life, and its numbers.
func (m Model) gpuLines(node string, gs *analysis.GPUSheet) []string {
	w, g := m.width, gs.GPU
	idx := "#?"
	if g.SlurmIndex >= 0 {
		idx = fmt.Sprintf("#%d", g.SlurmIndex)
	}
	head := " " + clip(node, 24) + " · " + present.OrMissing(clip(g.Model, 32)) + " · " + idx + " " + shortUUID(g.UUID)
	lines := []string{"", head}

	util, mem := spark.Values(g)
	// The GPU's facts as gpuprof show writes them (present.GPUFacts).
	f := gs.Facts
	utilText, memText := "util "+present.Missing, "peak "+present.Missing
	if f.UtilKnown {
		utilText = f.Util()
	}
	if f.MemKnown {
		memText = f.Memory()
	}
	// GPM activity beside the duty cycle (util): SM and tensor.
	var smText, tcText string
	var sm, tc []float64
	if a := gs.Activity; a != nil {
		sm, tc = spark.Activity(g)
		smText, tcText = a.SM.String(), a.Tensor.String()
	}
	sw := max(w-8-max(width(utilText), width(memText), width(smText), width(tcText))-2, 4)
	memHi := float64(g.MemoryTotal)
	if memHi == 0 {
		memHi = float64(g.MemPeak)
	}
	lines = append(lines,
		"   util "+fitClean(spark.Line(util, 100, sw, false), sw)+" "+utilText,
		"   mem  "+fitClean(spark.Line(mem, memHi, sw, true), sw)+" "+memText)
	if gs.Activity != nil {
		lines = append(lines,
			"   sm   "+fitClean(spark.Line(sm, 100, sw, false), sw)+" "+smText,
			"   tc   "+fitClean(spark.Line(tc, 100, sw, false), sw)+" "+tcText)
	} else {
		lines = append(lines, "   sm   "+present.Missing+" no GPM reading: util is the duty cycle only")
	}

	var facts []string
	if f.EnergyKnown {
		facts = append(facts, "energy "+f.Energy())
	}
	if g.TempValid {
		facts = append(facts, "max "+present.Temperature(g.MaxTempC))
	}
	if a := gs.Activity; a != nil {
		if a.DRAM.Known {
			facts = append(facts, "DRAM "+present.Activity(a.DRAM.Mean)+" %")
		}
		switch a.Scope {
		case profile.ActivityScopeSharedGPU:
			facts = append(facts, "sm/tc of the whole shared GPU")
		case profile.ActivityScopeMIG:
			facts = append(facts, "sm/tc of its MIG instance")
		}
	}
	xid := "XID errors " + present.Int(gs.XIDs.Count)
	if len(gs.XIDs.Codes) > 0 {
		// Each code once, with whose it is: "79 hardware, 13 application".
		codes := make([]string, len(gs.XIDs.Codes))
		for i, x := range gs.XIDs.Codes {
			codes[i] = fmt.Sprint(x.Code) + " " + present.XIDClass(x.Class)
		}
		xid += " (" + strings.Join(codes, ", ") + ")"
	}
	facts = append(facts, xid)
	lines = append(lines, "   "+strings.Join(facts, " · "))
	for _, fl := range f.Flags() {
		lines = append(lines, "   "+clip("flag: "+fl, max(w-3, 1)))
	}
	if len(g.Processes) > 0 {
		names := make([]string, len(g.Processes))
		for i, p := range g.Processes {
			names[i] = clip(p, 32)
		}
		lines = append(lines, "   "+clip("processes "+strings.Join(names, ", "), max(w-3, 1)))
	}
	return lines
}

// taskLines describe the task's runs.
func taskLines(t *taskInfo) []string {
	p := &t.profile
	runs := clip(p.Name, 40) + ": " + present.Count(p.Jobs, "run", "runs")
	if t.truncated {
		runs += " (the latest " + present.Count(taskRunsLimit, "job", "jobs") + " searched)"
	}
	runs += " · " + present.Int(p.WithGPUData) + " with GPU readings · class " + p.ClassLabel()
	lines := []string{runs}
	var facts []string
	if p.Duration.N > 0 {
		facts = append(facts, "runtime p50 "+present.Duration(secondsDuration(p.Duration.P50)))
	}
	if p.VRAMPeak.N > 0 {
		v := "VRAM p95 " + present.GiB(uint64(p.VRAMPeak.P95)) + "G"
		if p.VRAMPeakFrac.N > 0 {
			v += " (" + present.WholePercent(p.VRAMPeakFrac.P95) + "% of the card)"
		}
		facts = append(facts, v)
	}
	if p.UtilMean.N > 0 {
		facts = append(facts, "util p50 "+present.Util(p.UtilMean.P50)+"%")
	}
	if p.Finished > 0 {
		facts = append(facts, "failed "+present.WholePercent(p.FailureRate)+"% · timed out "+present.WholePercent(p.TimeoutRate)+"%")
	}
	if len(facts) > 0 {
		lines = append(lines, strings.Join(facts, " · "))
	}
	return lines
}

// wrapHanging wraps s to w columns behind a one-column margin; lines after
// the first are indented like s's text, after its leading spaces and
// bullet.
func wrapHanging(s string, w int) []string {
	text := strings.TrimLeft(s, " ")
	lead := s[:len(s)-len(text)]
	hang := len(lead)
	if strings.HasPrefix(text, "• ") {
		hang += 2
	}
	lines := wrapWords(text, max(w-1-hang, 10))
	out := make([]string, len(lines))
	for i, l := range lines {
		if i == 0 {
			out[i] = " " + lead + l
		} else {
			out[i] = " " + strings.Repeat(" ", hang) + l
		}
	}
	return out
}
