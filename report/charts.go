package report

import (
	"bytes"
	"fmt"
	"html/template"
	"image/color"
	"regexp"
	"strings"
	"unicode/utf8"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/gpuprof/gpuprof/analysis"
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
)

// chart is one rendered figure: SVG is empty when there was nothing to
// draw, and Empty then says why.
type chart struct {
	ID      string
	Caption string
	SVG     template.HTML
	Empty   string
}

// chartW and chartH are every chart's size, in points.
const (
	chartW vg.Length = 600
	chartH vg.Length = 300
	// labelMax is the most runes of a name a chart axis shows.
	labelMax = 18
)

var (
	colAllocated = color.RGBA{R: 0x4c, G: 0x72, B: 0xb0, A: 0xff}
	colUsed      = color.RGBA{R: 0xdd, G: 0x84, B: 0x52, A: 0xff}
	colThird     = color.RGBA{R: 0x55, G: 0xa8, B: 0x68, A: 0xff}
	colFourth    = color.RGBA{R: 0xc4, G: 0x4e, B: 0x52, A: 0xff}
	palette4     = []color.Color{colAllocated, colUsed, colThird, colFourth}
	// palette6 continues palette4 for charts with more series.
	palette6 = []color.Color{colAllocated, colUsed, colThird, colFourth,
		color.RGBA{R: 0x81, G: 0x72, B: 0xb3, A: 0xff}, color.RGBA{R: 0x93, G: 0x78, B: 0x60, A: 0xff}}
	dayNames = [7]string{"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"}
)

// charts renders every chart of d (cleaned), keyed by id.
func charts(d *Data) (map[string]chart, error) {
	out := map[string]chart{}
	for _, f := range []func(*Data) (chart, error){dailyChart, vramChart, utilChart, waitChart, classChart, heatmapChart, planChart} {
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

func newPlot(title, xLabel, yLabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	p.Y.Min = 0
	p.Legend.Top = true
	return p
}

var xmlProlog = regexp.MustCompile(`(?s)^<\?xml[^>]*\?>\s*(<!--.*?-->\s*)?`)

// render draws p as SVG for inlining in HTML: without the XML prolog and
// without the namespace declarations, which an inline <svg> does not need
// and which would be the only URLs in the file.
func render(p *plot.Plot) (template.HTML, error) {
	c := vgsvg.New(chartW, chartH)
	p.Draw(draw.New(c))
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return "", err
	}
	s := xmlProlog.ReplaceAllString(b.String(), "")
	s = strings.Replace(s, `xmlns="http://www.w3.org/2000/svg"`, "", 1)
	s = strings.Replace(s, `xmlns:xlink="http://www.w3.org/1999/xlink"`, "", 1)
	s = strings.Replace(s, "<svg ", `<svg role="img" `, 1)
	// The SVG comes from vgsvg, which escapes text; every label was
	// sanitised before it reached the plot.
	return template.HTML(s), nil //nolint:gosec // generated markup, text escaped by svgo
}

// roomForLegend raises the y axis above the tallest value so that the
// legend, drawn top right, does not cover the bars.
func roomForLegend(p *plot.Plot, series ...[]float64) {
	top := 0.0
	for _, vs := range series {
		for _, v := range vs {
			top = max(top, v)
		}
	}
	if top > 0 {
		p.Y.Max = top * 1.3
	}
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

func dailyChart(d *Data) (chart, error) {
	c := chart{ID: chartDaily, Caption: "GPU-hours allocated and used per day"}
	days := d.Workload.Daily
	allocated := false
	for _, x := range days {
		allocated = allocated || x.Allocated > 0
	}
	if !allocated {
		c.Empty = "No GPU-hours were allocated this month."
		return c, nil
	}
	p := newPlot("", "day of the month", "GPU-hours")
	alloc := make([]float64, len(days))
	used := make([]float64, len(days))
	labels := make([]string, len(days))
	hasUsed := false
	for i, x := range days {
		alloc[i], used[i] = x.Allocated, x.Used
		hasUsed = hasUsed || x.Used > 0
		labels[i] = ""
		if i%5 == 0 || i == len(days)-1 {
			labels[i] = shortLabel(strings.TrimPrefix(x.Date[min(len(x.Date), 5):], "-"))
		}
	}
	w := chartW / vg.Length(max(len(days), 1)) * 0.35
	ba, err := bars(alloc, w, colAllocated, -w/2)
	if err != nil {
		return c, err
	}
	p.Add(ba)
	p.Legend.Add("allocated", ba)
	if hasUsed {
		bu, err := bars(used, w, colUsed, w/2)
		if err != nil {
			return c, err
		}
		p.Add(bu)
		p.Legend.Add("used (utilisation-weighted)", bu)
	} else {
		c.Caption += " (no GPU readings: used is not known)"
	}
	roomForLegend(p, alloc, used)
	p.NominalX(labels...)
	svg, err := render(p)
	c.SVG = svg
	return c, err
}

func binLabels() []string {
	out := make([]string, 10)
	for i := range out {
		out[i] = fmt.Sprintf("%d–%d", i*10, i*10+10)
	}
	return out
}

func vramChart(d *Data) (chart, error) {
	c := chart{ID: chartVRAM, Caption: "GPU memory peak as a share of the card (%), job GPUs per model"}
	var models []int
	for i, m := range d.Workload.Models {
		n := 0
		for _, v := range m.VRAMHist {
			n += v
		}
		if n > 0 {
			models = append(models, i)
		}
	}
	if len(models) == 0 {
		c.Empty = "No GPU memory readings this month."
		return c, nil
	}
	if len(models) > len(palette4) {
		c.Caption += fmt.Sprintf(" (the %d models with most GPU-hours)", len(palette4))
		models = models[:len(palette4)]
	}
	p := newPlot("", "memory peak, % of the card", "job GPUs")
	w := chartW / 10 * 0.7 / vg.Length(len(models))
	var all [][]float64
	for k, i := range models {
		m := d.Workload.Models[i]
		vs := make([]float64, 10)
		for j, v := range m.VRAMHist {
			vs[j] = float64(v)
		}
		all = append(all, vs)
		off := (vg.Length(k) - vg.Length(len(models)-1)/2) * w
		b, err := bars(vs, w, palette4[k], off)
		if err != nil {
			return c, err
		}
		p.Add(b)
		p.Legend.Add(shortLabel(m.Model), b)
	}
	roomForLegend(p, all...)
	p.NominalX(binLabels()...)
	svg, err := render(p)
	c.SVG = svg
	return c, err
}

func utilChart(d *Data) (chart, error) {
	c := chart{ID: chartUtil, Caption: "GPU-hours by the GPU's mean utilisation (%)"}
	u := d.Workload.Util
	total := 0.0
	for _, v := range u.GPUHours {
		total += v
	}
	if !(total > 0) {
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
	svg, err := render(p)
	c.SVG = svg
	return c, err
}

func waitChart(d *Data) (chart, error) {
	c := chart{ID: chartWait, Caption: "Queue wait by partition, hours: median and 95th percentile"}
	var names []string
	var p50, p95 []float64
	for _, ps := range d.Findings.Summary.Partitions {
		if ps.Wait.N == 0 {
			continue
		}
		names = append(names, shortLabel(partitionName(ps.Partition)))
		p50 = append(p50, ps.Wait.P50/3600)
		p95 = append(p95, ps.Wait.P95/3600)
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
	p := newPlot("", "partition", "wait, hours")
	w := min(chartW/vg.Length(len(names))*0.3, 40)
	b1, err := bars(p50, w, colAllocated, -w/2)
	if err != nil {
		return c, err
	}
	b2, err := bars(p95, w, colUsed, w/2)
	if err != nil {
		return c, err
	}
	p.Add(b1, b2)
	p.Legend.Add("p50", b1)
	p.Legend.Add("p95", b2)
	roomForLegend(p, p50, p95)
	p.NominalX(names...)
	svg, err := render(p)
	c.SVG = svg
	return c, err
}

func classChart(d *Data) (chart, error) {
	c := chart{ID: chartClass, Caption: "GPU-hours by task class"}
	var names []string
	var vs []float64
	total := 0.0
	for _, cs := range d.Findings.Summary.ByClass {
		names = append(names, words(cs.Class.String()))
		vs = append(vs, cs.GPUHours)
		total += cs.GPUHours
	}
	if !(total > 0) {
		c.Empty = "No GPU-hours to break down by class."
		return c, nil
	}
	p := newPlot("", "", "GPU-hours")
	b, err := bars(vs, chartW/vg.Length(len(vs))*0.6, colThird, 0)
	if err != nil {
		return c, err
	}
	p.Add(b)
	p.NominalX(names...)
	svg, err := render(p)
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

// ramp is a sequential palette from near-white to dark blue.
type ramp []color.Color

func (r ramp) Colors() []color.Color { return r }

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

func heatmapChart(d *Data) (chart, error) {
	c := chart{ID: chartHeatmap, Caption: "Mean GPUs allocated by hour of the week"}
	g := weekGrid(d.Workload.HourOfWeek)
	peak := 0.0
	for _, day := range g {
		for _, v := range day {
			peak = max(peak, v)
		}
	}
	if !(peak > 0) {
		c.Empty = "No GPUs were allocated in any hour of the week."
		return c, nil
	}
	c.Caption += fmt.Sprintf(" (white 0 to dark blue %s GPUs)", num(peak, 1))
	p := newPlot("", "hour of the day", "")
	h := plotter.NewHeatMap(&g, newRamp(32))
	h.Min, h.Max = 0, peak
	p.Add(h)
	p.X.Tick.Marker = plot.TickerFunc(func(_, _ float64) []plot.Tick {
		var ts []plot.Tick
		for hr := 0; hr < 24; hr += 3 {
			ts = append(ts, plot.Tick{Value: float64(hr), Label: fmt.Sprintf("%02d", hr)})
		}
		return ts
	})
	p.Y.Tick.Marker = plot.TickerFunc(func(_, _ float64) []plot.Tick {
		ts := make([]plot.Tick, 7)
		for r := range ts {
			ts[r] = plot.Tick{Value: float64(r), Label: dayNames[6-r]}
		}
		return ts
	})
	p.Y.Min = -0.5
	svg, err := render(p)
	c.SVG = svg
	return c, err
}

// curveErrs is one model's purchase curve for plotter.NewYErrorBars: the
// median p95 wait at each size tried, with its p10–p90 as the bar.
type curveErrs struct {
	xys      plotter.XYs
	low, top []float64 // distances below and above the median
}

func (c curveErrs) Len() int                    { return len(c.xys) }
func (c curveErrs) XY(i int) (float64, float64) { return c.xys[i].X, c.xys[i].Y }
func (c curveErrs) YError(i int) (float64, float64) {
	return c.low[i], c.top[i]
}

// planChart is the simulated plan's purchase search: per GPU model, the
// predicted p95 wait at the horizon (free changes applied) against the
// GPUs of that model added — the median of the seeds as a line and
// points, the p10–p90 as whiskers, ± the calibration error as a shaded
// band — with the target as a dashed horizontal line.
func planChart(d *Data) (chart, error) {
	c := chart{ID: chartPlan, Caption: "Predicted p95 queue wait against GPUs added, per GPU model"}
	sp := d.SimPlan
	switch {
	case sp == nil:
		c.Empty = "Not simulated: no queue replay ran for this report."
		return c, nil
	case !sp.Simulated:
		c.Empty = "Not simulated: " + strings.TrimSuffix(sp.NotSimulated, ".") + "."
		return c, nil
	}
	var models []analysis.ModelPlan
	for _, m := range sp.Models {
		if len(m.Curve) > 0 {
			models = append(models, m)
		}
	}
	if len(models) == 0 {
		c.Empty = "No GPU model was searched: the replay found no model with jobs."
		return c, nil
	}
	if len(models) > len(palette6) {
		c.Caption += fmt.Sprintf(" (the first %d models searched, furthest over the target first)", len(palette6))
		models = models[:len(palette6)]
	}
	calErr, target := sp.CalibrationError, sp.TargetP95Wait
	top, maxAdded := target, 0
	for _, m := range models {
		for _, p := range m.Curve {
			top = max(top, p.ModelP95.Median+calErr, p.ModelP95.P90)
			maxAdded = max(maxAdded, p.Added)
		}
	}
	// Minutes for short waits, hours for long ones.
	unit, unitName := 3600.0, "hours"
	if top < 2*3600 {
		unit, unitName = 60, "minutes"
	}
	c.Caption = fmt.Sprintf("Predicted p95 queue wait of each GPU model's jobs at the %d-month horizon (%s) against GPUs of that model added: median of %s (points), p10–p90 (whiskers), ± the calibration error %s (shaded); dashed: the %s target",
		sp.Months, freeWords(sp), counted(sp.Seeds, "seed", "seeds"), wait(calErr), wait(target))
	p := newPlot("", "GPUs of the model added", "p95 wait, "+unitName)
	// Models side by side at each size, so their whiskers do not overlap.
	const spreadX = 0.12
	for k, m := range models {
		col := palette6[k]
		off := (float64(k) - float64(len(models)-1)/2) * spreadX
		n := len(m.Curve)
		e := curveErrs{xys: make(plotter.XYs, n), low: make([]float64, n), top: make([]float64, n)}
		band := make(plotter.XYs, 0, 2*n)
		for i, pt := range m.Curve {
			y := pt.ModelP95.Median / unit
			e.xys[i] = plotter.XY{X: float64(pt.Added) + off, Y: y}
			e.low[i] = max(0, y-pt.ModelP95.P10/unit)
			e.top[i] = max(0, pt.ModelP95.P90/unit-y)
			band = append(band, plotter.XY{X: e.xys[i].X, Y: y + calErr/unit})
		}
		for i := n - 1; i >= 0; i-- {
			band = append(band, plotter.XY{X: e.xys[i].X, Y: max(0, e.xys[i].Y-calErr/unit)})
		}
		if calErr > 0 {
			poly, err := plotter.NewPolygon(band)
			if err != nil {
				return c, err
			}
			r, g, b, _ := col.RGBA()
			poly.Color = color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: 0x48}
			poly.LineStyle.Width = 0
			p.Add(poly)
		}
		line, pts, err := plotter.NewLinePoints(e.xys)
		if err != nil {
			return c, err
		}
		line.Color, line.Width = col, vg.Points(1.5)
		pts.Color, pts.Shape, pts.Radius = col, draw.CircleGlyph{}, vg.Points(2.5)
		bars, err := plotter.NewYErrorBars(e)
		if err != nil {
			return c, err
		}
		bars.Color = col
		p.Add(line, pts, bars)
		label := shortLabel(m.Model)
		if m.Needed > 0 {
			label += fmt.Sprintf(" (+%d meets it)", m.Needed)
		}
		p.Legend.Add(label, line, pts)
	}
	entries := len(models) + 1
	if calErr > 0 {
		band, err := plotter.NewPolygon(plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 0}, {X: 1, Y: 1}})
		if err != nil {
			return c, err
		}
		band.Color, band.LineStyle.Width = color.NRGBA{R: 0x80, G: 0x80, B: 0x80, A: 0x50}, 0
		p.Legend.Add("± calibration error "+wait(calErr), band)
		entries++
	}
	xMin, xMax := -0.5, float64(maxAdded)+0.5
	tl, err := plotter.NewLine(plotter.XYs{{X: xMin, Y: target / unit}, {X: xMax, Y: target / unit}})
	if err != nil {
		return c, err
	}
	tl.Color, tl.Width = color.RGBA{R: 0x24, G: 0x29, B: 0x2f, A: 0xff}, vg.Points(1.2)
	tl.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
	p.Add(tl)
	p.Legend.Add("target: p95 ≤ "+wait(target), tl)
	p.X.Min, p.X.Max = xMin, xMax
	p.X.Tick.Marker = plot.TickerFunc(func(lo, hi float64) []plot.Tick {
		step := max(1, (maxAdded+9)/10)
		var ts []plot.Tick
		for x := 0; x <= maxAdded; x += step {
			ts = append(ts, plot.Tick{Value: float64(x), Label: fmt.Sprintf("+%d", x)})
		}
		return ts
	})
	// The legend sits at the top, from a third of the width, icons first:
	// a browser font wider than the one the plot measured with then runs
	// its text into empty space, not into the icons. It takes about 16
	// points an entry of the plotting area's ~230: raise the y axis so
	// that it sits above every line, band and whisker.
	p.Legend.Left, p.Legend.XOffs = true, chartW/3
	free := min(0.7, float64(entries)*16/230+0.06)
	p.Y.Min, p.Y.Max = 0, top/unit/(1-free)
	svg, err := render(p)
	c.SVG = svg
	return c, err
}
