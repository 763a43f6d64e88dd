package report

import (
	"fmt"
	"html"
	"image/color"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/capacity"
)

// Charts checked by what their SVG draws (issue #38 item 14): each shows
// its data's own variation, whatever the inventory's size, and one with
// nothing to show says so.

// Marks below the x axis' label are the legend's thumbnails: the helpers
// below return only those above floor (a y in the plot's coordinates, up;
// xLabelY finds it).

// xLabelY is the y of the text label (the x axis' label).
func xLabelY(t *testing.T, svg, label string) float64 {
	t.Helper()
	for _, tx := range svgTexts(t, svg) {
		if tx.text == label {
			return tx.y
		}
	}
	t.Fatalf("no text %q", label)
	return 0
}

var num = `([-0-9.e]+)`

// svgBars returns the height of every bar (a closed four-corner path)
// filled with the colour fill ("#4C72B0") above floor, in points.
func svgBars(t *testing.T, svg, fill string, floor float64) []float64 {
	t.Helper()
	re := regexp.MustCompile(`<path d="M` + num + `,` + num + `L[-0-9.e]+,` + num + `L[-0-9.e]+,[-0-9.e]+L[-0-9.e]+,[-0-9.e]+Z" style="fill:` + fill + `"`)
	var out []float64
	for _, m := range re.FindAllStringSubmatch(svg, -1) {
		y0, _ := strconv.ParseFloat(m[2], 64)
		y1, _ := strconv.ParseFloat(m[3], 64)
		if max(y0, y1) > floor {
			out = append(out, math.Abs(y1-y0))
		}
	}
	return out
}

// svgCircles returns the centres' x of the filled circles of radius r
// (vgsvg draws one as two arcs from its rightmost point) in fill, above
// floor.
func svgCircles(t *testing.T, svg, r, fill string, floor float64) []float64 {
	t.Helper()
	re := regexp.MustCompile(`<path d="M` + num + `,` + num + `A` + regexp.QuoteMeta(r+","+r) + ` 0 1 1 [^"]*Z" style="fill:` + fill + `"`)
	rad, _ := strconv.ParseFloat(r, 64)
	var out []float64
	for _, m := range re.FindAllStringSubmatch(svg, -1) {
		x, _ := strconv.ParseFloat(m[1], 64)
		y, _ := strconv.ParseFloat(m[2], 64)
		if y > floor {
			out = append(out, x-rad)
		}
	}
	return out
}

// svgLines returns the points' x of each stroked, unfilled path in
// stroke of width w above floor.
func svgLines(t *testing.T, svg, stroke, w string, floor float64) [][]float64 {
	t.Helper()
	re := regexp.MustCompile(`<path d="(M[^"]*)" style="fill:none;stroke:` + stroke + `;stroke-width:` + regexp.QuoteMeta(w) + `[;"]`)
	pt := regexp.MustCompile(`[ML]` + num + `,` + num)
	var out [][]float64
	for _, m := range re.FindAllStringSubmatch(svg, -1) {
		var xs []float64
		top := math.Inf(-1)
		for _, p := range pt.FindAllStringSubmatch(m[1], -1) {
			x, _ := strconv.ParseFloat(p[1], 64)
			y, _ := strconv.ParseFloat(p[2], 64)
			xs, top = append(xs, x), max(top, y)
		}
		if top > floor {
			out = append(out, xs)
		}
	}
	return out
}

// distinct counts the distinct values of xs, to a tenth of a point.
func distinct(xs []float64) int {
	seen := map[int64]bool{}
	for _, x := range xs {
		seen[int64(math.Round(x*10))] = true
	}
	return len(seen)
}

// bigCluster is the fixture as a trace of openb's size: 6,212 GPUs
// (149,088 GPU-hours a day) of which jobs hold 800–950 a day's worth.
func bigCluster() Data {
	d := fixture()
	const inv = 6212
	d.Workload.Headline.InventoryGPUs = inv
	for i := range d.Workload.Daily {
		x := &d.Workload.Daily[i]
		x.Allocated, x.Used, x.Pending, x.Capacity = 800+float64(i%7)*25, 500+float64(i%5)*20, 100+float64(i%3)*30, inv*24
	}
	for day := range 7 {
		for h := range 24 {
			// 33 to 40 GPUs held, busiest on weekday afternoons.
			v := 33 + 0.1*float64(h)
			if day < 5 && h >= 12 && h < 18 {
				v = 38 + float64(h-12)*0.4
			}
			d.Workload.HourOfWeek[day][h] = v
		}
	}
	return d
}

// TestDailyChartScaledToData: on a cluster whose capacity is 170 times
// its busiest day, the bars fill the chart and differ as the days do;
// the capacity is a value on a second axis, not a line that flattens
// them. Within reach of the data it is still drawn as a line.
func TestDailyChartScaledToData(t *testing.T) {
	c := renderCharts(t, bigCluster())[chartDaily]
	svg := html.UnescapeString(string(c.SVG))
	floor := xLabelY(t, svg, "day of the month (2026-11)")
	hs := svgBars(t, svg, "#4C72B0", floor)
	if len(hs) != 30 {
		t.Fatalf("%d allocated bars, want 30", len(hs))
	}
	lo, hi := slices.Min(hs), slices.Max(hs)
	if hi < 150 {
		t.Errorf("tallest bar %.1f points high of a %v-point panel: the bars are flattened", hi, chartH)
	}
	// 800 against 950 GPU-hours: the bars' heights are in that ratio.
	if r := lo / hi; math.Abs(r-800.0/950) > 0.01 {
		t.Errorf("shortest / tallest bar %.3f, want %.3f (the days' own variation)", r, 800.0/950)
	}
	if len(svgLines(t, svg, "#24292F", "1.5", floor)) != 0 {
		t.Error("the capacity is drawn as a line 170 times above the bars")
	}
	for _, want := range []string{"capacity, 149,088 GPU-hours a day: right-hand scale", "% of capacity", "0 %"} {
		if !strings.Contains(svg, ">"+want+"<") {
			t.Errorf("daily chart lacks %q", want)
		}
	}
	if !strings.Contains(c.Caption, "149,088 GPU-hours") || !strings.Contains(c.Caption, "busiest day allocated 0.6 %") {
		t.Errorf("caption %q does not give the capacity and the busiest day's share", c.Caption)
	}

	// The fixture's 32 GPUs (768 GPU-hours a day beside 520 at most): a
	// line, on the same axis, and bars still taller than half the chart.
	c = renderCharts(t, fixture())[chartDaily]
	svg = string(c.SVG)
	floor = xLabelY(t, svg, "day of the month (2026-11)")
	if n := len(svgLines(t, svg, "#24292F", "1.5", floor)); n != 1 {
		t.Errorf("%d capacity lines within reach of the data, want 1", n)
	}
	if hi := slices.Max(svgBars(t, svg, "#4C72B0", floor)); hi < 100 {
		t.Errorf("tallest bar %.1f points with the capacity drawn", hi)
	}
	// A day whose pending demand is above the capacity line is on the
	// chart: the axis covers both.
	d := fixture()
	d.Workload.Daily[20].Pending = 900
	svg = string(renderCharts(t, d)[chartDaily].SVG)
	if n := len(svgCircles(t, svg, "1.8", "#C44E52", xLabelY(t, svg, "day of the month (2026-11)"))); n != 30 {
		t.Errorf("%d of the 30 days' pending points drawn, want all (one is above the capacity)", n)
	}
}

// TestHeatmapColourSpread: a week of 33 to 40 GPUs held on 6,212 is
// drawn over the colours of the whole ramp (the inventory's scale made it
// one pale colour), the colour bar numbered from the quietest hour to the
// busiest.
func TestHeatmapColourSpread(t *testing.T) {
	c := renderCharts(t, bigCluster())[chartHeatmap]
	svg := string(c.SVG)
	used := 0
	for i := range rampSteps {
		// Each colour is once in the colour bar; more is a cell.
		if strings.Count(svg, colourFill(i)+`"`) > 1 {
			used++
		}
	}
	if used < rampSteps/2 {
		t.Errorf("the week's cells use %d of the %d colours, want at least half", used, rampSteps)
	}
	for _, end := range []int{0, rampSteps - 1} {
		if strings.Count(svg, colourFill(end)+`"`) < 2 {
			t.Errorf("no cell in colour %d: the scale is not the observed range", end)
		}
	}
	texts := map[string]bool{}
	for _, tx := range svgTexts(t, svg) {
		texts[tx.text] = true
	}
	for _, want := range []string{"33", "40", "GPUs allocated"} {
		if !texts[want] {
			t.Errorf("colour bar lacks %q", want)
		}
	}
	if !strings.Contains(c.Caption, "from 33 GPUs in the quietest hour") || !strings.Contains(c.Caption, "6,212 GPUs") {
		t.Errorf("caption %q does not give the range and the inventory", c.Caption)
	}
}

// planWith is the fixture with the plan's models replaced.
func planWith(models ...capacity.ModelPlan) Data {
	d := fixture()
	d.SimPlan.Models = models
	return d
}

func pt(added int, p95 float64) capacity.CurvePoint {
	return capacity.CurvePoint{Added: added, ModelP95: analysis.Spread{Median: p95, P10: p95 * 0.9, P90: p95 * 1.1}}
}

// TestPlanChartSizes: the purchase chart has one x per purchase size
// tried, whatever the number of models, with the target's dashed line; a
// plan whose models all meet the target with none added draws nothing
// and says so; the line is broken across sizes the offered load ruled
// out.
func TestPlanChartSizes(t *testing.T) {
	var seven []capacity.ModelPlan
	for i := range 7 {
		seven = append(seven, capacity.ModelPlan{Model: fmt.Sprintf("model-%d", i), GPUs: 8, Needed: 0, Curve: []capacity.CurvePoint{pt(0, 600)}})
	}
	c := renderCharts(t, planWith(seven...))[chartPlan]
	if c.SVG != "" || !strings.Contains(c.Empty, "No purchase was searched") || !strings.Contains(c.Empty, "model-6 00:10:00") {
		t.Errorf("seven models at +0 only: drawn %v, says %q", c.SVG != "", c.Empty)
	}
	// Seven models searched: the chart draws six and its caption says so.
	for i := range seven {
		seven[i].Needed = 8 - i
		seven[i].Curve = []capacity.CurvePoint{pt(0, 13000), pt(8-i, 3000)}
	}
	c = renderCharts(t, planWith(seven...))[chartPlan]
	if c.SVG == "" || !strings.Contains(c.Caption, "(the first 6 models searched, furthest over the target first)") || strings.Contains(string(c.SVG), "model-6") {
		t.Errorf("seven models searched: drawn %v, model-6 drawn %v, caption %q", c.SVG != "", strings.Contains(string(c.SVG), "model-6"), c.Caption)
	}

	// Three models whose searches tried sizes 0, 2, 4, 8 and 0, 4, 6 and
	// 0 only: five sizes, five x positions, each model's points on them.
	models := []capacity.ModelPlan{
		{Model: "A", GPUs: 8, Needed: 8, Curve: []capacity.CurvePoint{pt(0, 13000), pt(2, 11000), pt(4, 7000), pt(8, 3000)}},
		{Model: "B", GPUs: 8, Needed: 6, Curve: []capacity.CurvePoint{pt(0, 9000), pt(4, 5000), pt(6, 3300)}},
		{Model: "C", GPUs: 8, Needed: 0, Curve: []capacity.CurvePoint{pt(0, 1200)}},
	}
	c = renderCharts(t, planWith(models...))[chartPlan]
	svg := string(c.SVG)
	floor := xLabelY(t, svg, "GPUs of the model added")
	var all []float64
	for k, want := range []int{4, 3, 1} {
		xs := svgCircles(t, svg, "2.5", hexOf(palette6[k]), floor)
		if len(xs) != want || distinct(xs) != want {
			t.Errorf("model %s: %d points at %d x positions, want %d", models[k].Model, len(xs), distinct(xs), want)
		}
		all = append(all, xs...)
	}
	if n := distinct(all); n != 5 {
		t.Errorf("points at %d x positions, want 5 (the sizes 0, 2, 4, 6, 8 tried)", n)
	}
	if !regexp.MustCompile(`stroke:#24292F;stroke-width:1.2;stroke-dasharray:6,3`).MatchString(svg) {
		t.Error("no dashed target line")
	}

	// Sizes +1 … +39 ruled out by the offered load: the line from +0
	// does not run across them to +40.
	models = []capacity.ModelPlan{{Model: "A", GPUs: 64, Needed: 44, LoadBound: 40, Curve: []capacity.CurvePoint{pt(0, 13000), pt(40, 5000), pt(44, 3000), pt(48, 2000)}}}
	c = renderCharts(t, planWith(models...))[chartPlan]
	svg = string(c.SVG)
	floor = xLabelY(t, svg, "GPUs of the model added")
	xs := svgCircles(t, svg, "2.5", hexOf(palette6[0]), floor)
	lines := svgLines(t, svg, hexOf(palette6[0]), "1.5", floor)
	if len(xs) != 4 || len(lines) != 1 || len(lines[0]) != 3 || math.Abs(lines[0][0]-slices.Min(xs)) < 1 {
		t.Errorf("load bound 40: points at %v, lines %v; want one line through +40, +44, +48 only", xs, lines)
	}
	if !strings.Contains(c.Caption, "+1 to +39 not replayed") {
		t.Errorf("caption %q does not say which sizes were not replayed", c.Caption)
	}
}

// hexOf is a colour as vgsvg writes it.
func hexOf(c color.Color) string {
	r, g, b, _ := c.RGBA()
	return fmt.Sprintf("#%02X%02X%02X", r>>8, g>>8, b>>8)
}

// TestTrendChartBreaksAtGaps: a month without GPU readings has no point
// on the used line, and the line is broken there rather than drawn
// through it.
func TestTrendChartBreaksAtGaps(t *testing.T) {
	d := fixture()
	d.Earlier = []MonthHeadline{
		{Month: "2026-08", Headline: analysis.Headline{AllocatedGPUHours: 9000, MeasuredGPUHours: 8000, UsedGPUHours: 5000}},
		{Month: "2026-09", Headline: analysis.Headline{AllocatedGPUHours: 9500}},
		{Month: "2026-10", Headline: analysis.Headline{AllocatedGPUHours: 11000, MeasuredGPUHours: 9000, UsedGPUHours: 5600}},
	}
	svg := string(renderCharts(t, d)[chartTrend].SVG)
	floor := xLabelY(t, svg, "month")
	used := hexOf(palette6[1])
	if pts := svgCircles(t, svg, "2.5", used, floor); len(pts) != 3 {
		t.Errorf("%d points on the used line, want 3 (one month has no readings)", len(pts))
	}
	lines := svgLines(t, svg, used, "1.5", floor)
	if len(lines) != 1 || len(lines[0]) != 2 {
		t.Errorf("used lines %v, want one joining the last two months only", lines)
	}
	if alloc := svgLines(t, svg, hexOf(palette6[0]), "1.5", floor); len(alloc) != 1 || len(alloc[0]) != 4 {
		t.Errorf("allocated lines %v, want one through the four months", alloc)
	}
}

// TestPlanChartCutAxis: a busy month's smallest size (a p95 of 93 hours)
// does not set the axis: it ends at planChartCut times the target, the
// waits above it are marked at the top, and the sizes near the answer
// stand apart instead of lying flat on the target line.
func TestPlanChartCutAxis(t *testing.T) {
	models := []capacity.ModelPlan{{Model: "A", GPUs: 64, Needed: 64, Curve: []capacity.CurvePoint{
		pt(0, 93*3600), pt(32, 20000), pt(56, 4500), pt(60, 3700), pt(64, 3000)}}}
	d := planWith(models...)
	c := renderCharts(t, d)[chartPlan]
	svg := string(c.SVG)
	floor := xLabelY(t, svg, "GPUs of the model added")
	re := regexp.MustCompile(`<path d="M` + num + `,` + num + `A2.5,2.5 0 1 1 [^"]*Z" style="fill:` + hexOf(palette6[0]) + `"`)
	var ys []float64
	for _, m := range re.FindAllStringSubmatch(svg, -1) {
		if y, _ := strconv.ParseFloat(m[2], 64); y > floor {
			ys = append(ys, y)
		}
	}
	if len(ys) != 3 {
		t.Fatalf("%d points drawn, want 3 (+56, +60, +64; +0 and +32 are above the axis' end)", len(ys))
	}
	if spread := slices.Max(ys) - slices.Min(ys); spread < 10 {
		t.Errorf("+56 to +64 span %.1f pt: flat on the target line", spread)
	}
	if !strings.Contains(c.Caption, "over 4× the target") {
		t.Errorf("caption %q does not say where the axis ends", c.Caption)
	}
}

// TestPlanChartPlotsComparedWait: a size whose model p95 meets the target
// while one partition's jobs on it wait longer is judged by the longer
// wait, and the chart draws that one: the point stands above the target
// line, as the search's verdict says, not under it.
func TestPlanChartPlotsComparedWait(t *testing.T) {
	p0 := pt(0, 0.8*3600)
	p0.Compared = analysis.Spread{Median: 2 * 3600, P10: 1.8 * 3600, P90: 2.2 * 3600}
	models := []capacity.ModelPlan{{Model: "A", GPUs: 8, Needed: 4, Curve: []capacity.CurvePoint{p0, pt(4, 1800)}}}
	c := renderCharts(t, planWith(models...))[chartPlan]
	svg := string(c.SVG)
	floor := xLabelY(t, svg, "GPUs of the model added")
	re := regexp.MustCompile(`<path d="M` + num + `,` + num + `A2.5,2.5 0 1 1 [^"]*Z" style="fill:` + hexOf(palette6[0]) + `"`)
	var ys []float64
	for _, m := range re.FindAllStringSubmatch(svg, -1) {
		if y, _ := strconv.ParseFloat(m[2], 64); y > floor {
			ys = append(ys, y)
		}
	}
	// vgsvg's y runs up: +0 (2 h) stands above +4 (30 min) by at least
	// 1.5 h of the axis' 2.2 h (at least half the panel).
	if len(ys) != 2 || ys[0]-ys[1] < 0.5*(ys[0]-floor) {
		t.Errorf("points at y %v: +0 is drawn at its model p95 (48 min), not the partition's 2 h it is judged by", ys)
	}
}
