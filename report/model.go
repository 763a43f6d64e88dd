package report

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/capacity"
	"github.com/gpuprof/gpuprof/internal/present"
)

// The report is built once as a list of sections of format-neutral blocks;
// HTML and Markdown render the same list, so both show the same sections
// in the same order with the same words for missing data.

type blockKind int

const (
	blockPara blockKind = iota
	blockList
	blockTable
	blockCode
	blockChart
	blockHeading
)

type block struct {
	Kind  blockKind
	Text  string   // paragraph, heading, code label
	Items []string // list items, code lines
	Table *table
	Chart string // chart id
}

// table is a table of display strings; Num marks right-aligned columns.
type table struct {
	Head []string
	Num  []bool
	Rows [][]string
}

type section struct {
	ID     string
	Title  string
	Blocks []block
}

func (s *section) para(format string, args ...any) {
	s.Blocks = append(s.Blocks, block{Kind: blockPara, Text: fmt.Sprintf(format, args...)})
}
func (s *section) list(items []string) {
	if len(items) > 0 {
		s.Blocks = append(s.Blocks, block{Kind: blockList, Items: items})
	}
}
func (s *section) table(t *table)  { s.Blocks = append(s.Blocks, block{Kind: blockTable, Table: t}) }
func (s *section) chart(id string) { s.Blocks = append(s.Blocks, block{Kind: blockChart, Chart: id}) }
func (s *section) heading(text string) {
	s.Blocks = append(s.Blocks, block{Kind: blockHeading, Text: text})
}
func (s *section) code(label string, lines []string) {
	s.Blocks = append(s.Blocks, block{Kind: blockCode, Text: label, Items: lines})
}

// newTable makes a table; a heading starting with "#" is a numeric
// (right-aligned) column, the "#" is dropped.
func newTable(head ...string) *table {
	t := &table{}
	for _, h := range head {
		n := strings.HasPrefix(h, "#")
		t.Head = append(t.Head, strings.TrimPrefix(h, "#"))
		t.Num = append(t.Num, n)
	}
	return t
}

func (t *table) row(cells ...string) { t.Rows = append(t.Rows, cells) }

// Missing-data codes, shared by the JSON "missing" list and the text.
const (
	missingNoJobs      = "no_jobs"
	missingNoGPUJobs   = "no_gpu_jobs"
	missingNoGPUData   = "no_gpu_data" // GPU jobs, but only scheduler history
	missingSomeGPUData = "partial_gpu_data"
	missingOneModel    = "one_gpu_model"
	missingNoModel     = "no_gpu_model"
	missingNoCapacity  = "no_inventory"
	missingNoEarlier   = "no_earlier_months"
	missingNoWaits     = "no_queue_waits"
	missingNoEnergy    = "no_energy" // GPU-hours, none with an energy reading
)

// namedModels returns the GPU models known by name. The Workload's model
// "" holds GPUs without a per-GPU record (sacct history, unprofiled
// shards): it is no model, so a month of it alone has no GPU model known,
// not one model.
func namedModels(d *Data) []string {
	var out []string
	for _, m := range d.Workload.Models {
		if m.Model != "" {
			out = append(out, m.Model)
		}
	}
	return out
}

// missing lists what the month's data lacks, in a fixed order.
func missing(d *Data) []string {
	h := d.Workload.Headline
	s := d.Findings.Summary
	jobs := max(h.Jobs, s.Jobs)
	gpuJobs := max(h.GPUJobs, s.GPUJobs)
	var out []string
	switch {
	case jobs == 0:
		out = append(out, missingNoJobs)
	case gpuJobs == 0:
		out = append(out, missingNoGPUJobs)
	case s.WithGPUData == 0 && h.MeasuredGPUHours == 0:
		out = append(out, missingNoGPUData)
	case s.WithoutGPUData > 0:
		out = append(out, missingSomeGPUData)
	}
	switch len(namedModels(d)) {
	case 0:
		if gpuJobs > 0 {
			out = append(out, missingNoModel)
		}
	case 1:
		out = append(out, missingOneModel)
	}
	if noInventory(d) {
		out = append(out, missingNoCapacity)
	}
	if len(d.Earlier) == 0 {
		out = append(out, missingNoEarlier)
	}
	waits := false
	for _, p := range s.Partitions {
		waits = waits || p.Wait.N > 0
	}
	if !waits && jobs > 0 {
		out = append(out, missingNoWaits)
	}
	if h.AllocatedGPUHours > 0 && !h.Energy.Known() {
		out = append(out, missingNoEnergy)
	}
	return out
}

// noInventory reports whether the month has no GPU inventory to compare
// the demand with. It agrees with the simulated plan's verdict: the
// verdict no_inventory says so, and a plan that replayed had a cluster
// (from the profiles or slurm.conf) to replay on. Without a plan it is
// the profiles' inventory and the cross-check's count of GPUs.
func noInventory(d *Data) bool {
	if sp := d.SimPlan; sp != nil {
		if sp.Verdict.Code == capacity.VerdictNoInventory {
			return true
		}
		if sp.Simulated {
			return false
		}
	}
	return d.Workload.Headline.CapacityGPUHours <= 0 && d.Findings.Plan.CurrentGPUs == 0
}

func has(list []string, code string) bool {
	for _, c := range list {
		if c == code {
			return true
		}
	}
	return false
}

// build lays out the report of d, which must have been cleaned.
func build(d *Data) []section {
	miss := missing(d)
	return []section{
		headlineSection(d, miss),
		queueSection(d, miss),
		workSection(d, miss),
		bottleneckSection(d, miss),
		noticeSection(d, miss),
		lostSection(d, miss),
		historySection(d),
		planSection(d),
		whatifSection(d),
		recommendationSection(d, miss),
		noChangeSection(d, miss),
		profileSection(d, miss),
		methodsSection(d, miss),
	}
}

func headlineSection(d *Data, miss []string) section {
	s := section{ID: "headline", Title: "Headline numbers"}
	h := d.Workload.Headline
	// A slurm.conf left aside changes what every figure below rests on
	// (capacity, occupancy, partitions, the replay): the reader learns it
	// first, as the command line prints it first (cliview.ConfNote), not
	// only under Methods.
	if n := d.Workload.Conf.NotUsed; n != "" {
		s.para("Note: %s.", n)
	}
	if has(miss, missingNoJobs) {
		s.para("No jobs ran or waited in this month: there is nothing to report.")
		for _, c := range []string{chartDaily, chartHeatmap, chartUtil, chartVRAM} {
			s.chart(c)
		}
		return s
	}
	if has(miss, missingNoGPUJobs) {
		s.para("No job in this month requested or recorded a GPU.")
	}
	noGPUData := has(miss, missingNoGPUData)
	if noGPUData {
		s.para("No GPU readings for this month: only the scheduler's history (sacct) is available, so utilisation, idle GPU-hours and GPU memory cannot be shown.")
	}
	t := newTable("Measure", "#Value")
	t.row("Jobs (with a GPU)", fmt.Sprintf("%s (%s)", present.Int(h.Jobs), present.Int(h.GPUJobs)))
	t.row("Users / accounts", fmt.Sprintf("%s / %s", present.Int(h.Users), present.Int(h.Accounts)))
	t.row("GPU-hours allocated", present.GPUHours(h.AllocatedGPUHours))
	if noGPUData || h.MeasuredGPUHours <= 0 {
		t.row("GPU-hours measured", "no GPU readings")
		t.row("GPU-hours used", "no GPU readings")
		t.row("Utilisation (GPU-hour weighted)", "no GPU readings")
		t.row("Idle GPU-hours", "no GPU readings")
	} else {
		t.row("GPU-hours measured", fmt.Sprintf("%s (%s of allocated)", present.GPUHours(h.MeasuredGPUHours), present.Percent(h.Coverage)))
		t.row("GPU-hours used", present.GPUHours(h.UsedGPUHours))
		t.row("Utilisation (GPU-hour weighted)", present.Percent(h.Utilisation))
		t.row("Idle GPU-hours", fmt.Sprintf("%s (%s of measured)", present.GPUHours(h.IdleGPUHours), present.Percent(share(h.IdleGPUHours, h.MeasuredGPUHours))))
	}
	if h.VRAMPeakFrac.N > 0 {
		t.row("VRAM headroom (1 − p95 peak)", fmt.Sprintf("%s (p50 peak %s of the card, %s)", present.Percent(h.VRAMHeadroom), present.Percent(h.VRAMPeakFrac.P50), "over "+present.Count(h.VRAMPeakFrac.N, "job-GPU", "job-GPUs")+": a GPU counts once per job that held it"))
	} else {
		t.row("VRAM headroom (1 − p95 peak)", "no GPU memory readings")
	}
	inv := d.Workload.Inventory
	switch {
	case h.InventoryMisfit != "":
		t.row("Occupancy (allocated / capacity)", "refused: "+h.InventoryMisfit)
	case inv.Misfit != "":
		t.row("Occupancy (allocated / capacity)", "refused: "+inv.Misfit)
	case h.CapacityGPUHours > 0 && inv.Source != "":
		t.row("Occupancy (allocated / capacity)", fmt.Sprintf("%s of %s GPU-hours (%s from %s)", present.Percent(h.Occupancy), present.GPUHours(h.CapacityGPUHours), present.Count(h.InventoryGPUs, "GPU", "GPUs"), clusterSource(inv.Source)))
	case h.CapacityGPUHours > 0:
		t.row("Occupancy (allocated / capacity)", fmt.Sprintf("%s of %s GPU-hours", present.Percent(h.Occupancy), present.GPUHours(h.CapacityGPUHours)))
	default:
		t.row("Occupancy (allocated / capacity)", "capacity unknown (no GPU inventory)")
	}
	t.row("GPU-hours lost (failed, timed out, preempted, …; not cancelled)", present.GPUHours(d.Workload.LostGPUHours))
	if w := h.GPUWait; w.N > 0 {
		t.row("Queue wait of GPU jobs, observed (p50 / p95)", fmt.Sprintf("%s / %s (%s)", present.Seconds(w.P50), present.Seconds(w.P95), present.Count(w.N, "job", "jobs")))
	} else {
		t.row("Queue wait of GPU jobs, observed (p50 / p95)", "unknown (no GPU job has a submit and a start time)")
	}
	t.row("GPU energy", energyText(h.Energy))
	t.row("Effective GPU-hours (weighted by SM activity)", effectiveText(h.Effective))
	planHeadline(t, d.SimPlan)
	s.table(t)
	countingPara(&s, d.Workload.Counting)
	s.chart(chartDaily)
	s.chart(chartHeatmap)
	s.chart(chartUtil)

	s.heading("GPU models")
	planned, from := plannedModels(d)
	switch named := namedModels(d); {
	case len(named) == 0 && len(planned) > 0:
		// The jobs' records name no model, but the cluster's inventory
		// does, and the plan below replays on it: its models are known.
		why := "no job has a per-GPU record (sacct history, unprofiled shards)"
		if len(d.Workload.Models) == 0 {
			why = "the jobs carry no GPU readings"
		}
		s.para("No job's record names a GPU model (%s), so GPU-hours, waits and memory are not split by model here. The cluster's %s (%s) come from its inventory (from %s), on which the capacity plan below replays the jobs.",
			why, present.Count(len(planned), "GPU model", "GPU models"), present.List(planned), from)
	case len(named) == 0 && len(d.Workload.Models) == 0:
		s.para("No GPU model is known: the jobs carry no GPU readings.")
	case len(named) == 0:
		s.para("No GPU model is known: no job has a per-GPU record (sacct history, unprofiled shards), so models cannot be compared.")
	case len(named) == 1:
		s.para("Only one GPU model was used this month (%s), so models cannot be compared.", named[0])
	}
	if len(d.Workload.Models) == 0 {
		s.chart(chartVRAM)
	} else {
		modelTables(&s, d)
		s.chart(chartVRAM)
	}
	effectiveTables(&s, d)
	xidTables(&s, d)
	return s
}

// plannedModels are the GPU models of the cluster the simulated plan
// replayed on (its inventory), and where they came from; none without a
// replay.
func plannedModels(d *Data) (models []string, from string) {
	sp := d.SimPlan
	if sp == nil || !sp.Simulated || sp.Today == nil {
		return nil, ""
	}
	for _, g := range sp.Today.Models {
		if g.Name != "" && g.GPUs > 0 {
			models = append(models, g.Name)
		}
	}
	return models, clusterSource(sp.ClusterSource)
}

// modelName shows the Workload's model "", GPUs without a per-GPU record.
func modelName(m string) string {
	if m == "" {
		return "(no per-GPU record: sacct history, unprofiled shards)"
	}
	return m
}

// modelTables are what a purchaser compares GPU models by: how full each
// model's cards were and how long its jobs waited, then what its jobs did
// with the memory and how much energy they drew.
func modelTables(s *section, d *Data) {
	inv := d.Workload.Headline.InventoryGPUs > 0
	use := newTable("Model", "#Memory", "#Cards", "#GPU-hours", "#Occupancy", "#Observed wait p50", "#Observed wait p95", "#Mean util")
	// CO2e only with a configured factor: without one there is no column,
	// never a guessed default.
	carbon := d.Workload.Carbon
	memHead := []string{"Model", "#Job GPUs", "#VRAM peak p50", "#VRAM peak p95", "#Preallocated", "#Energy", "#Energy measured"}
	if carbon != "" {
		memHead = append(memHead, "#CO2e")
	}
	mem := newTable(memHead...)
	for _, m := range d.Workload.Models {
		if m.JobGPUs == 0 { // a model no job ran on is no row
			continue
		}
		util, p50, p95 := dash, dash, dash
		if m.UtilMean > 0 {
			util = points(m.UtilMean)
		}
		if m.VRAMPeakFrac.N > 0 {
			p50, p95 = present.Percent(m.VRAMPeakFrac.P50), present.Percent(m.VRAMPeakFrac.P95)
		}
		cards, occ := dash, dash
		switch {
		case m.InventoryMisfit:
			cards, occ = present.Int(m.Cards), "refused: the inventory does not fit the jobs"
		case m.Cards > 0:
			cards, occ = present.Int(m.Cards), present.Percent(m.Occupancy)
		case inv && m.Model != "":
			cards, occ = "none listed", "not in the inventory"
		}
		w50, w95 := distCells(m.Wait, present.Seconds)
		pre := present.Int(m.Preallocated)
		if m.Preallocated > 0 {
			pre = fmt.Sprintf("%s (%s GPU-h)", present.Int(m.Preallocated), present.GPUHours(m.PreallocatedGPUHours))
		}
		e, cov := energyCells(m.Energy)
		use.row(modelName(m.Model), gib(m.MemoryTotal), cards, present.GPUHours(m.GPUHours), occ, w50, w95, util)
		cells := []string{modelName(m.Model), present.Int(m.JobGPUs), p50, p95, pre, e, cov}
		if carbon != "" {
			cells = append(cells, co2eCell(m.Energy))
		}
		mem.row(cells...)
	}
	s.para("Occupancy is a model's GPU-hours allocated over its cards in the inventory × the month's hours; the observed wait is that of the jobs that ran on the model (a job on two models counts for both), as recorded, not replayed.")
	s.table(use)
	s.table(mem)
	if carbon != "" {
		s.para("%s "+carbonNote, energyNote, carbon)
		return
	}
	s.para("%s", energyNote)
}

// carbonNote names the emission factor (Workload.Carbon) under a table
// with a CO2e column.
const carbonNote = "CO2e is the energy times the configured emission factor (%s), over the part of each job's run in the month; energy in an hour without a factor has none."

// energyNote says where the energy figures come from and what
// "unknown" means.
const energyNote = "Energy is what the node agents recorded per GPU (NVML's energy counter, else power × time), counted in the month in proportion to each job's hours inside it. GPUs shared with other jobs (shards, MPS) and jobs known only from sacct have no reading: their energy is unknown, not zero, and \u201cmeasured\u201d is the share of GPU-hours that has one."

// partitionName shows the empty partition.
func partitionName(p string) string {
	if p == "" {
		return "(none)"
	}
	return p
}

func distCells(d analysis.Dist, f func(float64) string) (string, string) {
	if d.N == 0 {
		return dash, dash
	}
	return f(d.P50), f(d.P95)
}

func queueSection(d *Data, miss []string) section {
	s := section{ID: "queue", Title: "Queue wait and run time by partition"}
	parts := d.Findings.Summary.Partitions
	if len(parts) == 0 {
		s.para("No partition data: no jobs were analysed.")
		s.chart(chartWait)
		return s
	}
	if has(miss, missingNoWaits) {
		s.para("No job has both a submit (or eligible) and a start time, so queue waits are unknown.")
	}
	t := newTable("Partition", "#GPU jobs", "#GPU-hours", "#Jobs waited", "#Observed wait p50", "#Observed wait p95", "#Run p50", "#Run p95", "#Limit/run p50", "#Limit/run p95")
	for _, p := range parts {
		if p.Jobs == 0 {
			continue
		}
		w50, w95 := distCells(p.Wait, present.Seconds)
		r50, r95 := distCells(p.Run, present.Seconds)
		l50, l95 := distCells(p.LimitRatio, present.Times)
		t.row(partitionName(p.Partition), present.Int(p.Jobs), present.GPUHours(p.GPUHours), present.Int(p.Wait.N), w50, w95, r50, r95, l50, l95)
	}
	s.table(t)
	s.para("GPU jobs are all of the month's, those that never started included; the waits are over the jobs that started (jobs waited), the run times over those whose run time is known. Limit/run is the requested time limit over the run time of completed and timed-out jobs: 1× is a perfect request. A dash means no job had the numbers.")
	if l := d.Findings.Summary.NoLimitSentence(); l != "" {
		s.para("%s", l)
	}
	s.chart(chartWait)
	return s
}

func workSection(d *Data, miss []string) section {
	s := section{ID: "work", Title: "Work by task class, account and user"}
	sum := d.Findings.Summary
	if has(miss, missingNoJobs) {
		s.para("No jobs: no work to break down.")
		s.chart(chartClass)
		return s
	}
	s.heading("By task class")
	if sum.NeverStarted > 0 {
		s.para("%s never started (cancelled while pending, or pending): not runs, so in no class below.", present.Count(sum.NeverStarted, "GPU job", "GPU jobs"))
	}
	if sum.WithoutGPUData > sum.NeverStarted {
		c := d.Config.Classes
		n := sum.WithoutGPUData - sum.NeverStarted
		s.para("%s GPU %s no GPU readings: %s from the scheduler record alone (runs shorter than %s are short debugging, runs of at least %s long training); the rest stay unknown.",
			present.Int(n), present.Plural(n, "job has", "jobs have"), present.Plural(n, "its class comes", "their classes come"),
			present.Duration(c.ShortJobMax.D()), present.Duration(c.LongTrainingMin.D()))
	}
	t := newTable("Class", "#Jobs", "#GPU-hours", "#Share of GPU-hours")
	for _, c := range sum.ByClass {
		if c.Jobs > 0 { // a class no job fell in is no row
			t.row(words(c.Class.String()), present.Int(c.Jobs), present.GPUHours(c.GPUHours), present.Percent(share(c.GPUHours, sum.GPUHours)))
		}
	}
	if len(t.Rows) > 0 {
		s.table(t)
	} else {
		s.para("No job has a task class.")
	}
	s.chart(chartClass)

	w := d.Workload
	group := func(title, kind, column string, top []analysis.GroupUsage, other analysis.GroupUsage, label func(string) string) {
		s.heading(title)
		if len(top) == 0 {
			s.para("No %s used a GPU this month.", kind)
			return
		}
		t := newTable(column, "#Jobs", "#GPU-hours", "#Share", "#Used GPU-h", "#Utilisation", "#Idle GPU-h", "#Lost GPU-h", "#Observed wait p50", "Top class")
		add := func(name string, g analysis.GroupUsage) {
			util, used, idle := present.Percent(g.Utilisation), present.GPUHours(g.UsedGPUHours), present.GPUHours(g.IdleGPUHours)
			if has(miss, missingNoGPUData) || g.MeasuredGPUHours <= 0 {
				util, used, idle = dash, dash, dash
			}
			t.row(name, present.Int(g.Jobs), present.GPUHours(g.GPUHours), present.Percent(g.Share), used, util, idle, present.GPUHours(g.LostGPUHours), present.Seconds(g.WaitP50), words(g.TopClass.String()))
		}
		for _, g := range top {
			if g.Jobs > 0 {
				add(label(g.Name), g)
			}
		}
		if other.Count > 0 && other.Jobs > 0 {
			add(present.Count(other.Count, "other", "others"), other)
		}
		s.table(t)
	}
	group("By account", "accounts", "Account", w.Accounts, w.OtherAccounts, present.Account)
	energyByAccount(&s, w.Accounts, w.OtherAccounts, w.Carbon)
	group("By user", "users", "User", w.Users, w.OtherUsers, func(n string) string { return n })
	return s
}

// energyByAccount is the GPU energy of each account's jobs, unknown where
// no GPU of them recorded any.
func energyByAccount(s *section, top []analysis.GroupUsage, other analysis.GroupUsage, carbon string) {
	if len(top) == 0 {
		return
	}
	s.heading("Energy by account")
	t := newTable("Account", "#GPU-hours", "#Energy", "#Energy measured", "#kWh per measured GPU-hour")
	if carbon != "" {
		t = newTable("Account", "#GPU-hours", "#Energy", "#Energy measured", "#kWh per measured GPU-hour", "#CO2e")
	}
	add := func(name string, g analysis.GroupUsage) {
		e, cov := energyCells(g.Energy)
		per := "unknown"
		if g.Energy.Known() {
			per = present.Number(g.Energy.KWh/g.Energy.MeasuredGPUHours, 2)
		}
		if carbon != "" {
			t.row(name, present.GPUHours(g.GPUHours), e, cov, per, co2eCell(g.Energy))
			return
		}
		t.row(name, present.GPUHours(g.GPUHours), e, cov, per)
	}
	for _, g := range top {
		if g.Jobs > 0 {
			add(present.Account(g.Name), g)
		}
	}
	if other.Count > 0 && other.Jobs > 0 {
		add(present.Count(other.Count, "other", "others"), other)
	}
	s.table(t)
	if carbon != "" {
		s.para(carbonNote, carbon)
	}
}

func bottleneckSection(d *Data, miss []string) section {
	s := section{ID: "bottlenecks", Title: "Bottlenecks"}
	sum := d.Findings.Summary
	switch {
	case has(miss, missingNoJobs):
		s.para("No jobs: no bottlenecks to show.")
		return s
	case has(miss, missingNoGPUData):
		s.para("Without GPU readings only scheduler-visible bottlenecks (host memory, queueing) can be found.")
	}
	t := newTable("Bottleneck", "#Jobs", "#GPU-hours", "#Share of GPU-hours")
	total := 0.0
	for _, k := range sum.ByBottleneck {
		if k.Jobs == 0 { // a bottleneck no job has is no row
			continue
		}
		sh := share(k.GPUHours, sum.GPUHours)
		total += sh
		t.row(words(k.Kind.String()), present.Int(k.Jobs), present.GPUHours(k.GPUHours), present.Percent(sh))
	}
	if len(t.Rows) == 0 {
		s.para("No job has a bottleneck that could be found.")
		return s
	}
	s.table(t)
	s.para("%s", bottleneckNote(total))
	return s
}

// noticeSection says what the agents told users this month about idle
// and oversized GPUs (package notice): the tally's sentence and the
// notices by rule and what became of them, rows of zero left out. A month
// without any says so plainly: notices are off by default.
func noticeSection(d *Data, miss []string) section {
	s := section{ID: "notices", Title: "Notices to users"}
	n := d.Notices
	if n.Notices == 0 && n.FreedJobs == 0 {
		if has(miss, missingNoJobs) {
			s.para("No jobs: no notices this month.")
		} else {
			s.para("No notices this month: none was due, or notices are off (the default; [notices] enabled = true in the agents' configuration turns them on, see docs/notices.md).")
		}
		return s
	}
	s.para("%s", n.Sentence())
	t := newTable("Rule", "What became of it", "#Notices")
	for _, c := range n.Counts {
		if c.N > 0 {
			t.row(analysis.NoticeRuleWords(c.Rule), analysis.NoticeStatusWords(c.Status), present.Int(c.N))
		}
	}
	if len(t.Rows) > 0 {
		s.table(t)
	}
	s.para("A notice counts in the month in which the agent decided it. A job counts as freed when it ended within %s of a notice that reached its user (or of its cancellation); the GPU-hours freed are those from its end to the end of its time limit, clipped to the month.",
		present.Seconds(analysis.FreedAfter.Seconds()))
	return s
}

func lostSection(d *Data, miss []string) section {
	s := section{ID: "lost", Title: "GPU-hours lost"}
	w := d.Workload
	if has(miss, missingNoJobs) {
		s.para("No jobs: nothing was lost.")
		return s
	}
	s.para("Lost work is GPU time of jobs that ended failed, out of memory, on a failed node, never booted, past their deadline, preempted or timed out. Timed-out jobs are shown apart: one that checkpoints may have saved its work. Cancelled jobs are not lost work (services and interactive sessions end with scancel) and have a row of their own.")
	if len(w.Lost) == 0 {
		s.para("No GPU-hours were lost: no GPU job ended in one of those states.")
	} else {
		t := newTable("Final state", "#Jobs", "#GPU-hours", "#Share of allocated")
		for _, l := range w.Lost {
			if !l.State.LostApart() && l.Jobs > 0 {
				t.row(string(l.State), present.Int(l.Jobs), present.GPUHours(l.GPUHours), present.Percent(l.Share))
			}
		}
		for _, l := range w.Lost {
			if l.State.LostApart() && l.Jobs > 0 {
				t.row(string(l.State)+" (may have checkpointed)", present.Int(l.Jobs), present.GPUHours(l.GPUHours), present.Percent(l.Share))
			}
		}
		t.row("total lost", "", present.GPUHours(w.LostGPUHours), present.Percent(share(w.LostGPUHours, w.Headline.AllocatedGPUHours)))
		s.table(t)
	}
	if c := w.Cancelled; c.Jobs > 0 {
		s.para("Cancelled after they started, not counted as lost: %s %s, %s GPU-hours (%s of allocated).",
			present.Int(c.Jobs), present.Plural(c.Jobs, "job", "jobs"), present.GPUHours(c.GPUHours), present.Percent(c.Share))
	}
	return s
}

func historySection(d *Data) section {
	s := section{ID: "history", Title: "This month against earlier months"}
	if len(d.Earlier) == 0 {
		s.para("No earlier months are on record, so there is nothing to compare this month with.")
		return s
	}
	cols := []string{"Month", "#Jobs", "#GPU-h allocated", "#GPU-h used", "#Utilisation", "#Occupancy", "#Observed GPU wait p95", "#GPU-h lost", "#Energy"}
	carbon := d.Workload.Carbon != ""
	if carbon {
		cols = append(cols, "#CO2e")
	}
	t := newTable(cols...)
	all := months(d)
	for i, m := range all {
		h := m.Headline
		used, util, occ, wait95 := present.GPUHours(h.UsedGPUHours), present.Percent(h.Utilisation), present.Percent(h.Occupancy), dash
		if h.MeasuredGPUHours <= 0 {
			used, util = dash, dash
		}
		if h.CapacityGPUHours <= 0 {
			occ = dash
		}
		if h.GPUWait.N > 0 {
			wait95 = present.Seconds(h.GPUWait.P95)
		}
		energy := "unknown"
		if h.Energy.Known() {
			energy = present.KWh(h.Energy.KWh)
		}
		month := m.Month
		if i == len(all)-1 {
			month += " (this month)"
		}
		cells := []string{month, present.Int(h.Jobs), present.GPUHours(h.AllocatedGPUHours), used, util, occ, wait95, present.GPUHours(m.LostGPUHours), energy}
		if carbon {
			cells = append(cells, co2eCell(h.Energy))
		}
		t.row(cells...)
	}
	s.table(t)
	s.para("A dash means the month had no GPU readings, no inventory or no known wait; energy is unknown where no GPU recorded any. The wait is the observed one of the GPU jobs.")
	if carbon {
		s.para(carbonNote, d.Workload.Carbon)
	}
	s.chart(chartTrend)
	return s
}

func reasons(rs []analysis.Reason) []string {
	var out []string
	for _, r := range rs {
		text := r.String()
		if r.Rule != "" {
			text = r.Rule + ": " + text
		}
		out = append(out, text)
	}
	return out
}

// byTarget groups config lines by target, targets in first-seen order.
func byTarget(lines []analysis.ConfigLine) (targets []string, grouped map[string][]string) {
	grouped = map[string][]string{}
	seen := map[analysis.ConfigLine]bool{}
	for _, l := range lines {
		if _, ok := grouped[l.Target]; !ok {
			targets = append(targets, l.Target)
		}
		if seen[l] { // two recommendations asking for the same line: once
			continue
		}
		seen[l] = true
		grouped[l.Target] = append(grouped[l.Target], l.Text)
	}
	if lines, ok := grouped[analysis.TargetSbatch]; ok {
		grouped[analysis.TargetSbatch] = sbatchOrder(lines)
	}
	return targets, grouped
}

// sbatchOrder puts the #SBATCH lines of one job script before its other
// lines (export …), each kind in the order given: sbatch stops reading
// #SBATCH options at the first command.
func sbatchOrder(lines []string) []string {
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "#SBATCH") {
			out = append(out, l)
		}
	}
	for _, l := range lines {
		if !strings.HasPrefix(strings.TrimSpace(l), "#SBATCH") {
			out = append(out, l)
		}
	}
	return out
}

// bottleneckNote says what the bottleneck shares, which add up to total
// (a fraction of the month's GPU-hours, as the table prints them), mean.
func bottleneckNote(total float64) string {
	if total > 1.0005 { // more than 100 % as printed
		return fmt.Sprintf("A job with several bottlenecks counts under each, so the shares add up to more than 100 %% (%s).", present.Percent(total))
	}
	return fmt.Sprintf("The shares add up to %s of the month's GPU-hours; jobs in which no bottleneck was found are in no row.", present.Percent(total))
}

func recommendationSection(d *Data, miss []string) section {
	s := section{ID: "recommendations", Title: "Recommendations"}
	recs := d.Findings.Recommendations
	if len(recs) == 0 {
		if has(miss, missingNoJobs) {
			s.para("No recommendations: no jobs.")
		} else {
			s.para("No change is recommended this month; the rules that looked say why under \u201cRules that found nothing to change\u201d.")
		}
		return s
	}
	// The roll-up gathers the cluster-wide changes (slurm.conf, gres.conf,
	// sacctmgr); sbatch lines belong to one recommendation's jobs (one
	// user's, for per-user advice) and are never merged across them.
	var all []analysis.ConfigLine
	sbatch := false
	for i, r := range recs {
		s.heading(fmt.Sprintf("%d. %s", i+1, r.Title))
		s.para("Change: %s", r.Change)
		s.list(reasons(r.Evidence))
		// The replayed effect (or why there is none), then the rule's own
		// estimate as its rationale, as gpuprof recommend prints them.
		switch {
		case r.Simulated != nil:
			s.para("%s", r.Simulated.Text)
			if r.Effect != "" {
				s.para("Rationale: %s", r.Effect)
			}
		case r.Effect != "":
			s.para("Expected effect (not simulated): %s", r.Effect)
		}
		conf := "Confidence: " + present.PercentWhole(r.Confidence)
		if r.ConfidenceNote != "" {
			conf += " (" + r.ConfidenceNote + ")"
		}
		s.para("%s", conf)
		targets, grouped := byTarget(r.Config)
		for _, t := range targets {
			s.code(t, grouped[t])
		}
		for _, l := range r.Config {
			if l.Target == analysis.TargetSbatch {
				sbatch = true
				continue
			}
			all = append(all, l)
		}
	}
	if len(all) > 0 {
		s.heading("All configuration changes by target")
		targets, grouped := byTarget(all)
		for _, t := range targets {
			s.code(t, grouped[t])
		}
		if sbatch {
			s.para("Job-script lines (sbatch) are not gathered here: each belongs to the jobs of its recommendation and is shown with it above.")
		}
	}
	return s
}

func noChangeSection(d *Data, miss []string) section {
	s := section{ID: "no-change", Title: "Rules that found nothing to change"}
	if len(d.Findings.NoChange) == 0 && has(miss, missingNoJobs) {
		s.para("No jobs: no rule had data to look at.")
		return s
	}
	if len(d.Findings.NoChange) == 0 {
		s.para("Every rule that looked found something to recommend, or none looked.")
		return s
	}
	var items []string
	for _, n := range d.Findings.NoChange {
		items = append(items, words(n.Rule)+": "+n.Note)
	}
	s.list(items)
	return s
}

func profileSection(d *Data, miss []string) section {
	s := section{ID: "profiles", Title: "Top task profiles"}
	ps := d.Findings.Profiles
	if len(ps) == 0 {
		s.para("No task profiles: no GPU jobs were analysed.")
		return s
	}
	if len(ps) > topProfiles {
		s.para("The %d largest of %s by GPU-hours.", topProfiles, present.Count(len(ps), "recurring task", "recurring tasks"))
		ps = ps[:topProfiles]
	}
	t := newTable("User", "Task", "Account", "Class", "#Runs", "#With GPU data", "#GPU-hours", "#Util p50", "#VRAM p95", "#Run p50", "#Failed")
	for _, p := range ps {
		util, vram := dash, dash
		if p.UtilMean.N > 0 {
			util = points(p.UtilMean.P50)
		}
		if p.VRAMPeakFrac.N > 0 {
			vram = present.Percent(p.VRAMPeakFrac.P95)
		}
		run := dash
		if p.Duration.N > 0 {
			run = present.Seconds(p.Duration.P50)
		}
		failed := dash
		if p.Finished > 0 {
			failed = present.Percent(p.FailureRate)
		}
		t.row(p.User, present.JobName(p.Name), present.Account(p.Account), words(p.ClassLabel()), present.Int(p.Jobs), present.Int(p.WithGPUData), present.GPUHours(p.GPUHours), util, vram, run, failed)
	}
	s.table(t)
	if has(miss, missingNoGPUData) {
		s.para("Utilisation and memory columns are dashes: the month has no GPU readings.")
	}
	return s
}

func methodsSection(d *Data, miss []string) section {
	s := section{ID: "methods", Title: "Methods and data"}
	sum := d.Findings.Summary
	src := []string{}
	if d.Sources.Database != "" {
		src = append(src, "Database: "+d.Sources.Database)
	}
	if d.Sources.Collector != "" {
		src = append(src, "Collector: "+d.Sources.Collector)
	}
	if len(src) == 0 {
		src = append(src, "Data source not recorded.")
	}
	src = append(src, d.Sources.Notes...)
	s.list(src)
	s.para("Jobs analysed: %s, of which %s used a GPU and %s did not. Of the GPU jobs, %s have GPU profiles (readings from the node) and %s have only the scheduler's record (sacct history, no usable readings).",
		present.Int(sum.Jobs), present.Int(sum.GPUJobs), present.Int(sum.CPUJobs), present.Int(sum.WithGPUData), present.Int(sum.WithoutGPUData))
	method := sum.PercentileMethod
	if method == "" {
		method = analysis.PercentileMethod
	}
	s.para("Percentiles (p50, p95) are computed by the %s method: the smallest value with at least that share of the values at or below it; no interpolation.", method)
	s.para("GPU-hours are GPUs held × time, clipped to the month: a job that started before the month or ended after it counts only its hours inside the month, in the cluster's time zone. Utilisation is weighted by GPU-hours.")
	if d.Anonymized {
		s.para("User and account names are replaced by user-NN and account-NN, numbered by GPU-hours.")
	}
	n := sum.Notes
	if bad := n.NaN + n.Inf + n.Negative + n.UtilOver100 + n.FracOver1 + n.PeakOverCard + n.Inconsistent; bad > 0 {
		s.para("%s ignored as impossible (not a number, infinite, negative or out of range).", present.Count(bad, "reading was", "readings were"))
	}
	s.heading("Thresholds in force")
	if !configRecorded(d.Config) {
		s.para("The thresholds in force were not recorded.")
		return s
	}
	t := newTable("Setting", "Value")
	for _, th := range thresholds(d.Config) {
		t.row(th.Key, th.Text)
	}
	s.table(t)
	return s
}

// configRecorded reports whether c holds any setting: a zero Config
// (empty lists included) means the caller did not say which was in force.
func configRecorded(c analysis.Config) bool {
	for _, t := range thresholds(c) {
		if !t.zero {
			return true
		}
	}
	return false
}

// threshold is one TOML setting of the analysis configuration.
type threshold struct {
	Key   string // "classes.short_job_max"
	Value any    // the field's value, for JSON
	Text  string // the value as the report prints it
	zero  bool   // the value is zero or an empty list
}

// thresholds lists analysis.Config's TOML-tagged fields in declaration
// order, keyed by their dotted TOML names.
func thresholds(c analysis.Config) []threshold {
	var out []threshold
	var walk func(prefix string, v reflect.Value)
	walk = func(prefix string, v reflect.Value) {
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			tag, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
			if !f.IsExported() || tag == "-" || tag == "" {
				continue
			}
			key := tag
			if prefix != "" {
				key = prefix + "." + tag
			}
			fv := v.Field(i)
			if fv.Kind() == reflect.Struct {
				walk(key, fv)
				continue
			}
			val := fv.Interface()
			text := fmt.Sprint(val)
			if m, ok := val.(interface{ MarshalText() ([]byte, error) }); ok {
				if b, err := m.MarshalText(); err == nil {
					text = string(b)
					val = text
				}
			}
			if fv.Kind() == reflect.Slice {
				parts := make([]string, fv.Len())
				for j := range fv.Len() {
					parts[j] = fmt.Sprint(fv.Index(j).Interface())
				}
				text = strings.Join(parts, ", ")
			}
			zero := fv.IsZero() || fv.Kind() == reflect.Slice && fv.Len() == 0
			out = append(out, threshold{Key: key, Value: val, Text: text, zero: zero})
		}
	}
	walk("", reflect.ValueOf(c))
	return out
}
