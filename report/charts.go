package report

import (
	"fmt"
	"html/template"
	"image/color"
	"math"
	"strings"
	"unicode/utf8"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/internal/present"
)

// Chart ids: each chart's <figure> carries one, with or without data.
const (
	chartDaily   = "chart-daily"
	chartVRAM    = "chart-vram"
	chartUtil    = "chart-util"
	chartWait    = "chart-wait"
	chartClass   = "chart-class"
	chartHeatmap = "chart-heatmap"
	chartPlan    = "chart-plan"
	chartTrend   = "chart-trend"
)

// chart is one rendered figure: SVG is empty when there was nothing to
// draw, and Empty then says why.
type chart struct {
	ID      string
	Caption string
	SVG     template.HTML
	Empty   string
}

// chartW and chartH are a one-panel chart's size, in points, before its
// legend.
const (
	chartW vg.Length = 600
	chartH vg.Length = 280
	// labelMax is the most runes of a name a chart axis shows.
	labelMax = 18
)

var (
	colAllocated = color.RGBA{R: 0x4c, G: 0x72, B: 0xb0, A: 0xff}
	colUsed      = color.RGBA{R: 0xdd, G: 0x84, B: 0x52, A: 0xff}
	colThird     = color.RGBA{R: 0x55, G: 0xa8, B: 0x68, A: 0xff}
	colFourth    = color.RGBA{R: 0xc4, G: 0x4e, B: 0x52, A: 0xff}
	// colCapacity is the capacity line: the page's text colour.
	colCapacity = colInk
	// palette6 is the allocated, used, third and fourth colours and two
	// more, for charts with more series.
	palette6 = []color.Color{colAllocated, colUsed, colThird, colFourth,
		color.RGBA{R: 0x81, G: 0x72, B: 0xb3, A: 0xff}, color.RGBA{R: 0x93, G: 0x78, B: 0x60, A: 0xff}}
	dayNames = [7]string{"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"}
)

// charts renders every chart of d (cleaned), keyed by id.
func charts(d *Data) (map[string]chart, error) {
	out := map[string]chart{}
	for _, f := range []func(*Data) (chart, error){dailyChart, vramChart, utilChart, waitChart, classChart, heatmapChart, planChart, trendChart} {
		c, err := f(d)
		if err != nil {
			return nil, fmt.Errorf("chart %s: %w", c.ID, err)
		}
		out[c.ID] = c
	}
	return out, nil
}

// shortLabel sanitises and truncates a name for a chart axis.
func shortLabel(s string) string {
	s = sanitize(s)
	if s == "" {
		return "(none)"
	}
	if utf8.RuneCountInString(s) <= labelMax {
		return s
	}
	r := []rune(s)
	return string(r[:labelMax-1]) + "…"
}

// newPlot returns a plot in the chart font with the y axis from 0.
func newPlot(title, xLabel, yLabel string) *plot.Plot {
	p := plot.New()
	restyle(p)
	p.Title.Text = title
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	p.Y.Min = 0
	p.Y.Tick.Marker = numberTicks{}
	return p
}

// numberTicks are gonum's default ticks labelled as the report writes
// numbers: thousands separated, no trailing zeros ("12,000", "2.5").
type numberTicks struct{}

func (numberTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = numberTicks{}.label(ts[i].Value)
		}
	}
	return ts
}

// label writes v as a tick label.
func (numberTicks) label(v float64) string {
	label := present.Number(v, 2)
	if strings.Contains(label, ".") {
		label = strings.TrimRight(strings.TrimRight(label, "0"), ".")
	}
	return label
}

// one is a figure of a single full-width panel.
func one(p *plot.Plot, legend ...legendItem) *figure {
	return &figure{width: chartW, panelH: chartH, cols: 1, panels: []*plot.Plot{p}, legend: legend}
}

// topOf returns the largest value of the series, 0 for none.
func topOf(series ...[]float64) float64 {
	top := 0.0
	for _, vs := range series {
		for _, v := range vs {
			top = max(top, v)
		}
	}
	return top
}

func bars(vs []float64, width vg.Length, col color.Color, offset vg.Length) (*plotter.BarChart, error) {
	b, err := plotter.NewBarChart(plotter.Values(vs), width)
	if err != nil {
		return nil, err
	}
	b.Color = col
	b.LineStyle.Width = 0
	b.Offset = offset
	return b, nil
}

// addLines draws each segment of a series that has two points or more as
// a line 1.5 points wide in col, and returns the last one drawn, or, where
// none has two points, a line of the same style (not drawn) for the
// legend's thumbnail. segs is not empty.
func addLines(p *plot.Plot, segs []plotter.XYs, col color.Color) (*plotter.Line, error) {
	var line *plotter.Line
	for _, seg := range segs {
		if len(seg) < 2 {
			continue
		}
		l, err := plotter.NewLine(seg)
		if err != nil {
			return nil, err
		}
		l.Color, l.Width = col, vg.Points(1.5)
		p.Add(l)
		line = l
	}
	if line == nil {
		line = &plotter.Line{XYs: segs[0][:1], LineStyle: draw.LineStyle{Color: col, Width: vg.Points(1.5)}}
	}
	return line, nil
}

// fixedTicks returns a ticker with the given positions and labels.
func fixedTicks(ts []plot.Tick) plot.Ticker {
	return plot.TickerFunc(func(_, _ float64) []plot.Tick { return ts })
}

// capInScale is how far above the busiest day's GPU-hours the daily
// chart's capacity may be and still be drawn as a line on the same axis:
// further, the line would squash the bars flat (a 3,000-GPU inventory
// beside a few hundred GPU-hours a day), so the axis stays the data's and
// the capacity is a second scale on the right and a legend entry.
const capInScale = 1.5

// dailyChart is the month's GPU-hours per day: allocated and used as
// bars, the pending demand (GPUs requested × hours waiting) as a line.
// The axis is scaled to those; the capacity (the inventory's GPUs × the
// day's hours) is a step line above them when it lies within capInScale
// of the busiest day, and in every case a second axis on the right in
// per cent of a 24-hour day's capacity.
func dailyChart(d *Data) (chart, error) {
	c := chart{ID: chartDaily, Caption: "GPU-hours per day: allocated and used (bars), pending demand (line), capacity (line or right-hand scale)"}
	days := d.Workload.Daily
	n := len(days)
	alloc, used, pending, capacity := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	for i, x := range days {
		alloc[i], used[i], pending[i], capacity[i] = x.Allocated, x.Used, x.Pending, x.Capacity
	}
	if !(topOf(alloc) > 0) {
		c.Empty = "No GPU-hours were allocated this month."
		return c, nil
	}
	xLabel := "day of the month"
	if d.Month != "" {
		xLabel += " (" + d.Month + ")"
	}
	p := newPlot("", xLabel, "GPU-hours per day")
	var legend []legendItem
	w := chartW / vg.Length(max(n, 1)) * 0.35
	ba, err := bars(alloc, w, colAllocated, -w/2)
	if err != nil {
		return c, err
	}
	p.Add(ba)
	legend = append(legend, item("allocated", ba))
	var notes []string
	if topOf(used) > 0 {
		bu, err := bars(used, w, colUsed, w/2)
		if err != nil {
			return c, err
		}
		p.Add(bu)
		legend = append(legend, item("used (utilisation-weighted)", bu))
	} else {
		notes = append(notes, "no GPU readings: used is not known")
	}
	if topOf(pending) > 0 {
		li, err := addPending(p, pending)
		if err != nil {
			return c, err
		}
		legend = append(legend, li)
	} else {
		notes = append(notes, "no GPU job waited in the queue")
	}
	dataTop := topOf(alloc, used, pending)
	yMax := dataTop * 1.05
	var right *plot.Plot
	inv := d.Workload.Headline.InventoryGPUs
	if capTop := topOf(capacity); inv > 0 && capTop > 0 {
		if capTop <= dataTop*capInScale {
			// A step per day: 23- and 25-hour days of a DST change show.
			steps := make(plotter.XYs, 0, 2*n)
			for i, v := range capacity {
				steps = append(steps, plotter.XY{X: float64(i) - 0.5, Y: v}, plotter.XY{X: float64(i) + 0.5, Y: v})
			}
			l, err := plotter.NewLine(steps)
			if err != nil {
				return c, err
			}
			l.Color, l.Width = colCapacity, vg.Points(1.5)
			p.Add(l)
			legend = append(legend, item(fmt.Sprintf("capacity (%s × 24 h a day)", present.Count(inv, "GPU", "GPUs")), l))
			yMax = max(dataTop, capTop) * 1.05
		} else {
			// Off the data's scale: said, with the busiest day's share.
			legend = append(legend, item(fmt.Sprintf("capacity, %s GPU-hours a day: right-hand scale", present.Number(capTop, 0))))
			c.Caption += fmt.Sprintf("; the capacity (%s × 24 h a day, %s GPU-hours) is %s times the busiest day's GPU-hours and is not drawn as a line, so that the days' variation shows: the right-hand scale is in per cent of it (the busiest day allocated %s)",
				present.Count(inv, "GPU", "GPUs"), present.Number(capTop, 0), present.Number(capTop/dataTop, 0), present.Percent(topOf(alloc)/capTop))
		}
		right = percentAxis(yMax/(float64(inv)*24)*100, "% of capacity")
	} else {
		notes = append(notes, "no GPU inventory: capacity unknown")
	}
	if len(notes) > 0 {
		c.Caption += " (" + strings.Join(notes, "; ") + ")"
	}
	p.X.Min, p.X.Max = -0.5, float64(n)-0.5
	p.Y.Max = yMax
	var ts []plot.Tick
	for i, x := range days {
		day := strings.TrimLeft(x.Date[min(len(x.Date), 8):], "0")
		if i == 0 || (i+1)%5 == 0 {
			ts = append(ts, plot.Tick{Value: float64(i), Label: day})
		}
	}
	p.X.Tick.Marker = fixedTicks(ts)
	f := one(p, legend...)
	if right != nil {
		f.right, f.rightW = right, 34+textWidth("100 %", sizeTick)+sizeLabel*2
	}
	svg, err := f.render()
	c.SVG = svg
	return c, err
}

// addPending draws the daily chart's pending demand, a day's GPUs
// requested × hours waiting, as a dashed line with a point per day, and
// returns its legend item.
func addPending(p *plot.Plot, pending []float64) (legendItem, error) {
	pts := make(plotter.XYs, len(pending))
	for i, v := range pending {
		pts[i] = plotter.XY{X: float64(i), Y: v}
	}
	l, s, err := plotter.NewLinePoints(pts)
	if err != nil {
		return legendItem{}, err
	}
	l.Color, l.Width, l.Dashes = colFourth, vg.Points(1.5), []vg.Length{vg.Points(4), vg.Points(2)}
	s.Color, s.Shape, s.Radius = colFourth, draw.CircleGlyph{}, vg.Points(1.8)
	p.Add(l, s)
	return item("pending demand (GPUs requested × hours waiting)", l, s), nil
}

// percentAxis is a second y axis for the strip right of a panel: from 0
// to top per cent, with round ticks, and nothing drawn in it.
func percentAxis(top float64, label string) *plot.Plot {
	a := newPlot("", "", label)
	a.HideX()
	a.X.Min, a.X.Max = 0, 1
	a.Y.Min, a.Y.Max = 0, top
	a.X.Padding, a.Y.Padding = 0, 0
	a.Y.Tick.Marker = plot.TickerFunc(func(lo, hi float64) []plot.Tick {
		var ts []plot.Tick
		for _, t := range (plot.DefaultTicks{}).Ticks(lo, hi) {
			if t.Label != "" {
				t.Label = numberTicks{}.label(t.Value) + " %"
			}
			ts = append(ts, t)
		}
		return ts
	})
	return a
}

// vramPanels is the most GPU models the VRAM chart draws, one panel each;
// preX is where a panel's preallocated bar stands, apart from the bins
// 0 … 9.
const (
	vramPanels = 6
	preX       = 11.5
)

// vramChart is one panel per GPU model: GPU-hours by the GPU's memory
// peak as a share of its card, in ten bins, with the preallocated GPUs'
// GPU-hours as a bar of their own (their peak is a reservation).
func vramChart(d *Data) (chart, error) {
	c := chart{ID: chartVRAM, Caption: "GPU memory peak as a share of the card, in GPU-hours, one panel per GPU model; preallocated GPUs (a framework reserved the memory at start, so the peak says nothing of the need) apart"}
	var models []analysis.ModelUsage
	for _, m := range d.Workload.Models {
		if m.Model != "" && topOf(m.VRAMHistGPUHours[:], []float64{m.PreallocatedGPUHours}) > 0 {
			models = append(models, m)
		}
	}
	if len(models) == 0 {
		c.Empty = "No GPU memory readings this month."
		return c, nil
	}
	if len(models) > vramPanels {
		c.Caption += fmt.Sprintf(" (the %d models with most GPU-hours)", vramPanels)
		models = models[:vramPanels]
	}
	f := &figure{width: chartW, panelH: chartH, cols: 1}
	if len(models) > 1 {
		f.cols, f.panelH = 2, 220
	}
	panelW := f.width / vg.Length(f.cols)
	anyPre := false
	for _, m := range models {
		anyPre = anyPre || m.PreallocatedGPUHours > 0
	}
	var histItem, preItem legendItem
	for _, m := range models {
		p := newPlot(legendText(m.Model), "memory peak, % of the card", "GPU-hours")
		bw := panelW / 14 * 0.8
		hist, err := bars(m.VRAMHistGPUHours[:], bw, colAllocated, 0)
		if err != nil {
			return c, err
		}
		p.Add(hist)
		histItem = item("GPU-hours by memory peak", hist)
		if m.PreallocatedGPUHours > 0 {
			pre, err := bars([]float64{m.PreallocatedGPUHours}, bw, colFourth, 0)
			if err != nil {
				return c, err
			}
			pre.XMin = preX
			p.Add(pre)
			preItem = item("preallocated (peak is a reservation, not a need)", pre)
		}
		var ts []plot.Tick
		for pc := 0; pc <= 100; pc += 20 {
			ts = append(ts, plot.Tick{Value: float64(pc)/10 - 0.5, Label: fmt.Sprint(pc)})
		}
		p.X.Min, p.X.Max = -0.6, 9.6
		if anyPre {
			ts = append(ts, plot.Tick{Value: preX, Label: "prealloc."})
			p.X.Max = preX + 0.6
		}
		p.X.Tick.Marker = fixedTicks(ts)
		p.Y.Max = topOf(m.VRAMHistGPUHours[:], []float64{m.PreallocatedGPUHours}) * 1.05
		f.panels = append(f.panels, p)
	}
	f.legend = append(f.legend, histItem)
	if preItem.label != "" {
		f.legend = append(f.legend, preItem)
	}
	svg, err := f.render()
	c.SVG = svg
	return c, err
}

// legendText is a name as a legend or panel title shows it: sanitised,
// whole unless absurdly long.
func legendText(s string) string { return item(s).label }

func binLabels() []string {
	out := make([]string, 10)
	for i := range out {
		out[i] = fmt.Sprintf("%d–%d", i*10, i*10+10)
	}
	return out
}

func utilChart(d *Data) (chart, error) {
	c := chart{ID: chartUtil, Caption: "GPU-hours by the GPU's mean utilisation (%)"}
	u := d.Workload.Util
	if !(topOf(u.GPUHours[:]) > 0) {
		c.Empty = "No GPU utilisation readings this month."
		return c, nil
	}
	p := newPlot("", "mean utilisation, %", "GPU-hours")
	b, err := bars(u.GPUHours[:], chartW/10*0.7, colAllocated, 0)
	if err != nil {
		return c, err
	}
	p.Add(b)
	p.NominalX(binLabels()...)
	svg, err := one(p).render()
	c.SVG = svg
	return c, err
}

// waitFloor is the shortest wait the log-scale wait chart draws: a wait
// of less (a job that started at once) is drawn at it.
const waitFloor = 1.0 // seconds

// waitTicks are the wait chart's candidate ticks: seconds and labels.
var waitTicks = []plot.Tick{
	{Value: 1, Label: "1 s"}, {Value: 10, Label: "10 s"}, {Value: 60, Label: "1 min"},
	{Value: 600, Label: "10 min"}, {Value: 3600, Label: "1 h"}, {Value: 6 * 3600, Label: "6 h"},
	{Value: 86400, Label: "1 d"}, {Value: 7 * 86400, Label: "7 d"}, {Value: 30 * 86400, Label: "30 d"},
	{Value: 365 * 86400, Label: "1 y"},
}

// waitChart shows each partition's median and 95th percentile queue wait
// as two markers joined by a line on a logarithmic axis, so a median of a
// minute stays visible beside a p95 of hours.
func waitChart(d *Data) (chart, error) {
	c := chart{ID: chartWait, Caption: "Observed queue wait by partition: median (p50) and 95th percentile (p95), logarithmic axis"}
	var names []string
	var p50, p95 []float64
	for _, ps := range d.Findings.Summary.Partitions {
		if ps.Wait.N == 0 {
			continue
		}
		names = append(names, shortLabel(partitionName(ps.Partition)))
		p50 = append(p50, ps.Wait.P50)
		p95 = append(p95, ps.Wait.P95)
	}
	if len(names) == 0 {
		c.Empty = "No queue waits are known this month."
		return c, nil
	}
	const maxParts = 12
	if len(names) > maxParts {
		c.Caption += fmt.Sprintf(" (first %d partitions by name)", maxParts)
		names, p50, p95 = names[:maxParts], p50[:maxParts], p95[:maxParts]
	}
	floored := false
	at := func(vs []float64) plotter.XYs {
		out := make(plotter.XYs, len(vs))
		for i, v := range vs {
			if v < waitFloor {
				v, floored = waitFloor, true
			}
			out[i] = plotter.XY{X: float64(i), Y: math.Log10(v)}
		}
		return out
	}
	// The axis is linear in log10(seconds), its ticks labelled with
	// durations: gonum's LogScale places the axis label by the linear
	// middle of the range and shrinks the plot to make room for it.
	lo, hi := at(p50), at(p95)
	p := newPlot("", "partition", "queue wait (log scale)")
	for i := range lo {
		l, err := plotter.NewLine(plotter.XYs{lo[i], hi[i]})
		if err != nil {
			return c, err
		}
		l.Color, l.Width = colGrid, vg.Points(1.5)
		p.Add(l)
	}
	s50, err := plotter.NewScatter(lo)
	if err != nil {
		return c, err
	}
	s50.Color, s50.Shape, s50.Radius = colAllocated, draw.CircleGlyph{}, vg.Points(4)
	s95, err := plotter.NewScatter(hi)
	if err != nil {
		return c, err
	}
	s95.Color, s95.Shape, s95.Radius = colUsed, draw.PyramidGlyph{}, vg.Points(4.5)
	p.Add(s50, s95)
	yMax := max(topOf(p95), 60)
	p.Y.Min, p.Y.Max = math.Log10(waitFloor/2), math.Log10(yMax*2)
	var ts []plot.Tick
	for _, t := range waitTicks {
		if v := math.Log10(t.Value); v >= p.Y.Min && v <= p.Y.Max {
			ts = append(ts, plot.Tick{Value: v, Label: t.Label})
		}
	}
	p.Y.Tick.Marker = fixedTicks(ts)
	p.X.Min, p.X.Max = -0.5, float64(len(names))-0.5
	p.NominalX(names...)
	if floored {
		c.Caption += fmt.Sprintf("; a wait under %s is drawn at %s", waitTicks[0].Label, waitTicks[0].Label)
	}
	svg, err := one(p, item("p50 (median wait)", s50), item("p95", s95)).render()
	c.SVG = svg
	return c, err
}

func classChart(d *Data) (chart, error) {
	c := chart{ID: chartClass, Caption: "GPU-hours by task class"}
	var names []string
	var vs []float64
	for _, cs := range d.Findings.Summary.ByClass {
		names = append(names, words(cs.Class.String()))
		vs = append(vs, cs.GPUHours)
	}
	if !(topOf(vs) > 0) {
		c.Empty = "No GPU-hours to break down by class."
		return c, nil
	}
	p := newPlot("", "task class", "GPU-hours")
	b, err := bars(vs, chartW/vg.Length(len(vs))*0.6, colThird, 0)
	if err != nil {
		return c, err
	}
	p.Add(b)
	p.NominalX(names...)
	svg, err := one(p).render()
	c.SVG = svg
	return c, err
}

// weekGrid is Workload.HourOfWeek as a plotter.GridXYZ: columns are hours,
// rows weekdays with Monday on top.
type weekGrid [7][24]float64

func (g *weekGrid) Dims() (c, r int)   { return 24, 7 }
func (g *weekGrid) Z(c, r int) float64 { return g[6-r][c] }
func (g *weekGrid) X(c int) float64    { return float64(c) }
func (g *weekGrid) Y(r int) float64    { return float64(r) }

// scaleGrid is the colour bar: one column of rows cells from lo to hi,
// each cell holding its middle value.
type scaleGrid struct {
	rows   int
	lo, hi float64
}

func (g scaleGrid) Dims() (c, r int)   { return 1, g.rows }
func (g scaleGrid) Z(_, r int) float64 { return g.Y(r) }
func (g scaleGrid) X(int) float64      { return 0 }
func (g scaleGrid) Y(r int) float64 {
	return g.lo + (float64(r)+0.5)*(g.hi-g.lo)/float64(g.rows)
}

// ramp is a sequential palette from near-white to dark blue.
type ramp []color.Color

func (r ramp) Colors() []color.Color { return r }

// rampSteps is how many colours the heat map and its colour bar use.
const rampSteps = 32

func newRamp(n int) ramp {
	out := make(ramp, n)
	for i := range out {
		t := float64(i) / float64(n-1)
		out[i] = color.RGBA{
			R: uint8(0xf4 - t*(0xf4-0x08)),
			G: uint8(0xf8 - t*(0xf8-0x30)),
			B: uint8(0xfb - t*(0xfb-0x6b)),
			A: 0xff,
		}
	}
	return out
}

// scaleTicks returns about five round ticks from lo to hi GPUs, both
// ends among them (written to two decimals at most).
func scaleTicks(lo, hi float64) []plot.Tick {
	step := niceStep((hi - lo) / 4)
	lab := numberTicks{}.label
	ts := []plot.Tick{{Value: lo, Label: lab(lo)}}
	for v := math.Floor(lo/step+1) * step; v < hi-step/4; v += step {
		if v-lo >= step/4 {
			ts = append(ts, plot.Tick{Value: v, Label: lab(v)})
		}
	}
	return append(ts, plot.Tick{Value: hi, Label: lab(hi)})
}

// niceStep rounds x up to 1, 2 or 5 times a power of ten.
func niceStep(x float64) float64 {
	if !(x > 0) {
		return 1
	}
	mag := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*mag >= x {
			return m * mag
		}
	}
	return 10 * mag
}

// heatmapChart is the mean GPUs allocated in each hour of the week. Its
// colour scale runs over the hours' observed range, from the quietest
// hour (lightest) to the busiest (darkest), so that the week's pattern
// shows whatever the inventory's size; the colour bar on the right gives
// the range's numbers, and the caption the inventory they compare with.
// A week whose every hour is the same has no range: every cell is the
// darkest colour and the scale runs from 0.
func heatmapChart(d *Data) (chart, error) {
	c := chart{ID: chartHeatmap, Caption: "Mean GPUs allocated by hour of the week"}
	g := weekGrid(d.Workload.HourOfWeek)
	lo, hi := math.Inf(1), 0.0
	for _, day := range g {
		for _, v := range day {
			lo, hi = min(lo, v), max(hi, v)
		}
	}
	if !(hi > 0) {
		c.Empty = "No GPUs were allocated in any hour of the week."
		return c, nil
	}
	if hi-lo < hi*1e-9 {
		c.Caption += fmt.Sprintf(" (every hour of the week the same: %s GPUs", numberTicks{}.label(hi))
		lo = 0
	} else {
		c.Caption += fmt.Sprintf(" (colour scale over the hours' range, from %s GPUs in the quietest hour, lightest, to %s in the busiest, darkest", numberTicks{}.label(lo), numberTicks{}.label(hi))
	}
	if inv := d.Workload.Headline.InventoryGPUs; inv > 0 {
		c.Caption += fmt.Sprintf("; the inventory has %s: the busiest hour held %s of them)", present.Count(inv, "GPU", "GPUs"), present.Percent(hi/float64(inv)))
	} else {
		c.Caption += "; no GPU inventory to compare with)"
	}
	pal := newRamp(rampSteps)
	p := newPlot("", "hour of the day (local time)", "")
	h := plotter.NewHeatMap(&g, pal)
	h.Min, h.Max = lo, hi
	h.Underflow, h.Overflow = pal[0], pal[len(pal)-1]
	p.Add(h)
	var hts []plot.Tick
	for hr := 0; hr < 24; hr += 3 {
		hts = append(hts, plot.Tick{Value: float64(hr), Label: fmt.Sprintf("%02d:00", hr)})
	}
	p.X.Tick.Marker = fixedTicks(hts)
	dts := make([]plot.Tick, 7)
	for r := range dts {
		dts[r] = plot.Tick{Value: float64(r), Label: dayNames[6-r]}
	}
	p.Y.Tick.Marker = fixedTicks(dts)
	p.X.Min, p.X.Max = -0.5, 23.5
	p.Y.Min, p.Y.Max = -0.5, 6.5

	// The colour bar: the same palette over lo … hi, with its numbers.
	bar := newPlot("", "", "GPUs allocated")
	bh := plotter.NewHeatMap(scaleGrid{rows: rampSteps, lo: lo, hi: hi}, pal)
	bh.Min, bh.Max = lo, hi
	bar.Add(bh)
	bar.HideX()
	bar.X.Min, bar.X.Max = -0.5, 0.5
	bar.Y.Min, bar.Y.Max = lo, hi
	ticks := scaleTicks(lo, hi)
	bar.Y.Tick.Marker = fixedTicks(ticks)
	bar.X.Padding, bar.Y.Padding = 0, p.Y.Padding
	widest := vg.Length(0)
	for _, t := range ticks {
		widest = max(widest, textWidth(t.Label, sizeTick))
	}
	f := one(p)
	f.right, f.rightW = bar, 34+widest+sizeLabel*2
	svg, err := f.render()
	c.SVG = svg
	return c, err
}
