package report

import (
	"fmt"
	"image/color"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/capacity"
	"github.com/gpuprof/gpuprof/internal/present"
)

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
//
// The unit, the x range and the axis' top (planScale) are decided from all
// the curves before any is drawn; each model's band, line, whiskers and
// legend item share its colour (plotCurve); the plot is layered in the
// order the steps are called.
func planChart(d *Data) (chart, error) {
	c := chart{ID: chartPlan, Caption: "Predicted p95 queue wait against GPUs added, per GPU model"}
	sp := d.SimPlan
	models, empty := planModels(sp)
	if empty != "" {
		c.Empty = empty
		return c, nil
	}
	more := len(models) > len(palette6)
	if more {
		models = models[:len(palette6)]
	}
	s := newPlanScale(sp, models)
	c.Caption = fmt.Sprintf("Predicted p95 queue wait the search compares with the target (each GPU model's jobs, or its jobs in one partition when theirs is longer) at the %d-month horizon (%s) against GPUs of that model added: median of %s (points), p10–p90 (whiskers), ± the calibration error %s (shaded); dashed: the %s target",
		sp.Months, freeWords(sp), present.Count(sp.Seeds, "seed", "seeds"), wait(s.calErr), wait(s.target))
	if more {
		c.Caption += fmt.Sprintf(" (the first %d models searched, furthest over the target first)", len(palette6))
	}
	p := newPlot("", "GPUs of the model added", "p95 wait, "+s.unitName)
	var legend []legendItem
	var notes []string
	// Every model's points stand at the size tried, one x per purchase
	// size: models are told apart by colour, not by a shift that would
	// read as another size.
	for k, m := range models {
		li, note, err := plotCurve(p, m, palette6[k], s)
		if err != nil {
			return c, err
		}
		legend = append(legend, li)
		if note != "" {
			notes = append(notes, note)
		}
	}
	marks, caption, err := planMarks(p, s)
	if err != nil {
		return c, err
	}
	legend = append(legend, marks...)
	c.Caption += caption
	if len(notes) > 0 {
		c.Caption += "; " + strings.Join(notes, "; ")
	}
	p.X.Min, p.X.Max = s.xMin, s.xMax
	p.X.Tick.Marker = plot.TickerFunc(func(lo, hi float64) []plot.Tick {
		step := int(max(1, niceStep(float64(s.maxAdded)/10)))
		var ts []plot.Tick
		for x := 0; x <= s.maxAdded; x += step {
			ts = append(ts, plot.Tick{Value: float64(x), Label: fmt.Sprintf("+%d", x)})
		}
		return ts
	})
	p.Y.Min, p.Y.Max = 0, s.top/s.unit*1.05
	svg, err := one(p, legend...).render()
	c.SVG = svg
	return c, err
}

// planModels is the models the purchase chart draws (those with a curve),
// or, when it draws none, why: not simulated, no model searched, or every
// model meets the target with the GPUs it has. A chart of one size (none
// added) for models that meet the target shows no search: it is said in
// words, with the waits.
func planModels(sp *capacity.SimPlan) ([]capacity.ModelPlan, string) {
	switch {
	case sp == nil:
		return nil, "Not simulated: no queue replay ran for this report."
	case !sp.Simulated:
		return nil, "Not simulated: " + strings.TrimSuffix(sp.NotSimulated, ".") + "."
	}
	var models []capacity.ModelPlan
	for _, m := range sp.Models {
		if len(m.Curve) > 0 {
			models = append(models, m)
		}
	}
	if len(models) == 0 {
		return nil, "No GPU model was searched: the replay found no model with jobs."
	}
	var met []string
	for _, m := range models {
		if len(m.Curve) > 1 || m.Curve[0].Added != 0 || m.Needed != 0 || m.Curve[0].Over != nil {
			return models, ""
		}
		met = append(met, fmt.Sprintf("%s %s", m.Model, wait(comparedP95(m.Curve[0]).Median)))
	}
	return nil, fmt.Sprintf("No purchase was searched: every GPU model meets the target p95 wait of %s at the %d-month horizon with the GPUs it has (predicted p95: %s).",
		wait(sp.TargetP95Wait), sp.Months, strings.Join(met, ", "))
}

// planScale is what the purchase chart decides from all the curves before
// it draws one: the y axis' top and unit, the x range, and whether any
// size is marked at the top (proved over the target, or clipped).
type planScale struct {
	calErr, target float64
	top            float64 // the y axis' top, in seconds
	unit           float64 // seconds per unit of the y axis
	unitName       string
	maxAdded       int
	xMin, xMax     float64
	anyOver        bool // a size was proved over the target
	clipped        bool // a computed wait is over planChartCut × the target
}

// newPlanScale decides the purchase chart's scale from the models' curves.
func newPlanScale(sp *capacity.SimPlan, models []capacity.ModelPlan) planScale {
	s := planScale{calErr: sp.CalibrationError, target: sp.TargetP95Wait}
	s.top = s.target
	for _, m := range models {
		for _, p := range m.Curve {
			s.maxAdded = max(s.maxAdded, p.Added)
			if p.Over != nil {
				s.anyOver = true
				continue
			}
			w := comparedP95(p)
			s.top = max(s.top, w.Median+s.calErr, w.P90)
		}
	}
	// The axis reaches at most planChartCut times the target: a busy
	// month's smallest sizes (a p95 of days) would otherwise flatten the
	// sizes near the answer onto the target line. A computed wait above
	// the cut is marked at the top like a size proved over the target;
	// the table has its figure.
	cut := planChartCut * s.target
	if s.target > 0 && s.top > cut {
		s.top, s.clipped = cut, true
	}
	// Sizes a replay stopped early proved over the target have no wait to
	// plot: a triangle at the top of the chart marks each.
	if s.anyOver {
		s.top = max(s.top, 1.5*s.target)
	}
	// Minutes for short waits, hours for long ones.
	s.unit, s.unitName = 3600.0, "hours"
	if s.top < 2*3600 {
		s.unit, s.unitName = 60, "minutes"
	}
	s.xMin, s.xMax = -0.5, float64(s.maxAdded)+0.5
	return s
}

// plotCurve adds one model's curve to p in its colour — triangles at the
// top for the sizes above the chart, the calibration band, the line, the
// points and their whiskers — and returns its legend item and, for a
// curve drawn whose smallest sizes the offered load ruled out, the
// caption's note that says so.
func plotCurve(p *plot.Plot, m capacity.ModelPlan, col color.Color, s planScale) (legendItem, string, error) {
	var computed []capacity.CurvePoint
	var over plotter.XYs
	for _, pt := range m.Curve {
		if pt.Over != nil || (s.clipped && comparedP95(pt).Median > s.top) {
			over = append(over, plotter.XY{X: float64(pt.Added), Y: s.top / s.unit})
			continue
		}
		computed = append(computed, pt)
	}
	var overPts *plotter.Scatter
	if len(over) > 0 {
		sc, err := plotter.NewScatter(over)
		if err != nil {
			return legendItem{}, "", err
		}
		sc.Color, sc.Shape, sc.Radius = col, draw.TriangleGlyph{}, vg.Points(3.5)
		p.Add(sc)
		overPts = sc
	}
	if len(computed) == 0 {
		return legendItem{label: legendText(m.Model) + " (every size tried above the chart)", thumbs: []plot.Thumbnailer{overPts}}, "", nil
	}
	e := curveErrsOf(computed, s)
	if s.calErr > 0 {
		if err := addCalibrationBand(p, e.xys, col, s); err != nil {
			return legendItem{}, "", err
		}
	}
	line, err := addCurveLine(p, m, computed, e.xys, col)
	if err != nil {
		return legendItem{}, "", err
	}
	pts, err := plotter.NewScatter(e.xys)
	if err != nil {
		return legendItem{}, "", err
	}
	pts.Color, pts.Shape, pts.Radius = col, draw.CircleGlyph{}, vg.Points(2.5)
	bars, err := plotter.NewYErrorBars(e)
	if err != nil {
		return legendItem{}, "", err
	}
	bars.Color = col
	p.Add(pts, bars)
	label := legendText(m.Model)
	if m.Needed > 0 {
		label += fmt.Sprintf(" (+%d meets it)", m.Needed)
	}
	var note string
	if m.LoadBound > 1 {
		note = fmt.Sprintf("%s: +1 to +%d not replayed (the offered load rules them out)", legendText(m.Model), m.LoadBound-1)
	}
	return legendItem{label: label, thumbs: []plot.Thumbnailer{line, pts}}, note, nil
}

// curveErrsOf is the points and whiskers of the sizes a curve computed
// waits for, in the chart's unit, the whiskers cut at the axis' top.
func curveErrsOf(computed []capacity.CurvePoint, s planScale) curveErrs {
	n := len(computed)
	e := curveErrs{xys: make(plotter.XYs, n), low: make([]float64, n), top: make([]float64, n)}
	for i, pt := range computed {
		w := comparedP95(pt)
		y := w.Median / s.unit
		e.xys[i] = plotter.XY{X: float64(pt.Added), Y: y}
		e.low[i] = max(0, y-w.P10/s.unit)
		e.top[i] = max(0, min(w.P90, s.top)/s.unit-y)
	}
	return e
}

// addCalibrationBand shades ± the calibration error around a curve's
// medians, in the model's colour made translucent, cut at the axis' top
// and at zero.
func addCalibrationBand(p *plot.Plot, xys plotter.XYs, col color.Color, s planScale) error {
	band := make(plotter.XYs, 0, 2*len(xys))
	for _, xy := range xys {
		band = append(band, plotter.XY{X: xy.X, Y: min(xy.Y+s.calErr/s.unit, s.top/s.unit)})
	}
	for i := len(xys) - 1; i >= 0; i-- {
		band = append(band, plotter.XY{X: xys[i].X, Y: max(0, xys[i].Y-s.calErr/s.unit)})
	}
	poly, err := plotter.NewPolygon(band)
	if err != nil {
		return err
	}
	r, g, b, _ := col.RGBA()
	poly.Color = color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: 0x48}
	poly.LineStyle.Width = 0
	p.Add(poly)
	return nil
}

// addCurveLine draws the line through a curve's medians and returns one
// of its pieces for the legend. The line joins sizes tried one after
// another, and is broken where a size proved over the target lies between
// two, and across the sizes the offered load ruled out (not replayed).
func addCurveLine(p *plot.Plot, m capacity.ModelPlan, computed []capacity.CurvePoint, xys plotter.XYs, col color.Color) (*plotter.Line, error) {
	n := len(computed)
	var segs []plotter.XYs
	start := 0
	for i := 1; i <= n; i++ {
		if i < n && !curveGap(m, computed[i-1].Added, computed[i].Added) {
			continue
		}
		segs = append(segs, xys[start:i])
		start = i
	}
	return addLines(p, segs, col)
}

// planMarks adds what the purchase chart shows for all models — the
// target's dashed line, and the legend's calibration band and triangle —
// and returns their legend items and what the caption adds for the
// triangles.
func planMarks(p *plot.Plot, s planScale) ([]legendItem, string, error) {
	var legend []legendItem
	if s.calErr > 0 {
		band, err := plotter.NewPolygon(plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 0}, {X: 1, Y: 1}})
		if err != nil {
			return nil, "", err
		}
		band.Color, band.LineStyle.Width = color.NRGBA{R: 0x80, G: 0x80, B: 0x80, A: 0x50}, 0
		legend = append(legend, item("± calibration error "+wait(s.calErr), band))
	}
	tl, err := plotter.NewLine(plotter.XYs{{X: s.xMin, Y: s.target / s.unit}, {X: s.xMax, Y: s.target / s.unit}})
	if err != nil {
		return nil, "", err
	}
	tl.Color, tl.Width = colInk, vg.Points(1.2)
	tl.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
	p.Add(tl)
	legend = append(legend, item("target: p95 ≤ "+wait(s.target), tl))
	if !s.anyOver && !s.clipped {
		return legend, "", nil
	}
	mark, err := plotter.NewScatter(plotter.XYs{{X: 0, Y: 0}})
	if err != nil {
		return nil, "", err
	}
	mark.Color, mark.Shape, mark.Radius = colInk, draw.TriangleGlyph{}, vg.Points(3.5)
	switch {
	case s.anyOver && s.clipped:
		legend = append(legend, item("above the chart (proved over the target, or over "+fmt.Sprint(planChartCut)+"× it)", mark))
		return legend, fmt.Sprintf("; triangles at the top: sizes proved over the target by a replay stopped early (the bound is in the table) or whose p95 is over %d× the target, the axis' end (the wait is in the table)", planChartCut), nil
	case s.anyOver:
		legend = append(legend, item("over the target (the replay stopped once it proved so)", mark))
		return legend, "; triangles at the top: sizes proved over the target by a replay stopped early (the bound is in the table)", nil
	default:
		legend = append(legend, item("p95 over "+fmt.Sprint(planChartCut)+"× the target (in the table)", mark))
		return legend, fmt.Sprintf("; triangles at the top: sizes whose p95 is over %d× the target, the axis' end (the wait is in the table)", planChartCut), nil
	}
}

// comparedP95 is the wait a purchase size is judged by: the model's p95,
// or its jobs' in one partition when that is longer (CurvePoint.Compared);
// the model's own where a curve carries no compared wait.
func comparedP95(p capacity.CurvePoint) analysis.Spread {
	if p.Compared.Median < p.ModelP95.Median {
		return p.ModelP95
	}
	return p.Compared
}

// planChartCut is how many times the target p95 wait the purchase
// chart's axis reaches at most.
const planChartCut = 4

// curveGap says whether the plan chart's line breaks between two sizes a
// model's curve computed waits for, a then b: a size between them was
// proved over the target (no wait to join through), or the offered load's
// bound lies between them (the sizes below it were not replayed).
func curveGap(m capacity.ModelPlan, a, b int) bool {
	if m.LoadBound > 1 && a < m.LoadBound && b >= m.LoadBound && b-a > 1 {
		return true
	}
	for _, pt := range m.Curve {
		if pt.Over != nil && pt.Added > a && pt.Added < b {
			return true
		}
	}
	return false
}
