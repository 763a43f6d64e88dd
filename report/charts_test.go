package report

import (
	"fmt"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/plot/font"
)

// renderCharts returns the charts of d as the HTML report draws them.
func renderCharts(t *testing.T, d Data) map[string]chart {
	t.Helper()
	clean := cleanData(d)
	cs, err := charts(&clean)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// svgText is one <text> element of a chart: its text (unescaped) and,
// unless it is rotated (an axis label, drawn in a frame of its own), its
// baseline in the plot's coordinates (y up; vgsvg writes y negated under
// a scale(1, -1)).
type svgText struct {
	text    string
	x, y    float64
	rotated bool
}

var (
	textElem = regexp.MustCompile(`<text x="([-0-9.e]+)" y="([-0-9.e]+)"[^>]*>([^<]*)</text>`)
	// rotated is a group vgsvg draws a rotated text in.
	rotated = regexp.MustCompile(`(?s)<g transform="[^"]*rotate[^"]*">.*?</g>`)
)

func svgTexts(t *testing.T, svg string) []svgText {
	t.Helper()
	var out []svgText
	parse := func(svg string, rot bool) {
		for _, m := range textElem.FindAllStringSubmatch(svg, -1) {
			x, err1 := strconv.ParseFloat(m[1], 64)
			y, err2 := strconv.ParseFloat(m[2], 64)
			if err1 != nil || err2 != nil {
				t.Fatalf("bad text position in %q", m[0])
			}
			out = append(out, svgText{text: html.UnescapeString(m[3]), x: x, y: -y, rotated: rot})
		}
	}
	parse(rotated.ReplaceAllString(svg, ""), false)
	for _, g := range rotated.FindAllString(svg, -1) {
		parse(g, true)
	}
	return out
}

// TestChartsFontFamily: every text of every chart asks for the page's
// font, DejaVu Sans, then sans-serif; none names gonum's default fonts.
func TestChartsFontFamily(t *testing.T) {
	cs := renderCharts(t, fixture())
	for _, id := range []string{chartDaily, chartVRAM, chartUtil, chartWait, chartClass, chartHeatmap, chartPlan, chartTrend} {
		svg := string(cs[id].SVG)
		if svg == "" {
			t.Errorf("%s: not drawn (%s)", id, cs[id].Empty)
			continue
		}
		n := strings.Count(svg, "<text ")
		if n == 0 {
			t.Errorf("%s: no text", id)
		}
		if got := strings.Count(svg, "font-family:DejaVu Sans, sans-serif;"); got != n {
			t.Errorf("%s: %d of %d texts in font-family DejaVu Sans, sans-serif", id, got, n)
		}
		for _, bad := range []string{"Liberation", "Times", "serif;"} {
			if strings.Contains(strings.ReplaceAll(svg, "sans-serif;", ""), bad) {
				t.Errorf("%s: names %q", id, bad)
			}
		}
		for _, bad := range []string{"http:", "https:", "url(", "xlink:href", "<image", "@import"} {
			if strings.Contains(svg, bad) {
				t.Errorf("%s: contains %q, a request the page must not make", id, bad)
			}
		}
	}
}

// TestChartFontFallback: without DejaVu Sans on disk the charts measure
// with gonum's Liberation Sans, more widely, and still ask for DejaVu
// Sans.
func TestChartFontFallback(t *testing.T) {
	f := loadChartFont(filepath.Join(t.TempDir(), "missing.ttf"))
	if f.family != "Liberation Sans" || f.slack <= 1 {
		t.Errorf("fallback = %q with slack %v, want Liberation Sans measured wider", f.family, f.slack)
	}
	if _, err := os.Stat(dejaVuSans); err != nil {
		t.Skipf("no DejaVu Sans here (%v): fonts-dejavu-core is not installed", err)
	}
	f = loadChartFont(dejaVuSans)
	if f.family != "DejaVu Sans" || f.slack != 1 {
		t.Errorf("DejaVu Sans loaded as %q with slack %v", f.family, f.slack)
	}
	// DejaVu Sans is the wider face: the fallback's slack covers it.
	lib := loadChartFont("")
	for _, name := range []string{"NVIDIA A100-SXM4-80GB", "pending demand (GPUs requested × hours waiting)"} {
		w, _, _ := f.handler.Box(name, font.From(f.font, 10))
		lw, _, _ := lib.handler.Box(name, font.From(lib.font, 10))
		if w <= lw || float64(w) > float64(lw)*lib.slack {
			t.Errorf("%q: DejaVu Sans %v, Liberation Sans %v × %v: the slack does not cover the difference", name, w, lw, lib.slack)
		}
	}
}

// TestLegendsWhole: a long GPU model name is written whole in the legend
// and the panel title, the legend lies below every axis (outside the data
// area), and its entries fit the chart's width without overlapping.
func TestLegendsWhole(t *testing.T) {
	d := fixture()
	long := "NVIDIA A100-SXM4-80GB"
	for i := range d.Workload.Models {
		if strings.HasPrefix(d.Workload.Models[i].Model, "NVIDIA A100") {
			d.Workload.Models[i].Model = long
		}
	}
	for i := range d.SimPlan.Models {
		if strings.HasPrefix(d.SimPlan.Models[i].Model, "NVIDIA A100") {
			d.SimPlan.Models[i].Model = long
		}
	}
	cs := renderCharts(t, d)
	for _, id := range []string{chartVRAM, chartPlan} {
		if !strings.Contains(html.UnescapeString(string(cs[id].SVG)), ">"+long) {
			t.Errorf("%s: the full name %q is not in the chart", id, long)
		}
	}
	legends := map[string][]string{
		chartDaily: {"allocated", "used (utilisation-weighted)", "pending demand (GPUs requested × hours waiting)", "capacity (32 GPUs × 24 h a day)"},
		chartVRAM:  {"GPU-hours by memory peak", "preallocated (peak is a reservation, not a need)"},
		chartWait:  {"p50 (median wait)", "p95"},
		chartPlan:  {"NVIDIA H100 80GB HBM3", long, "± calibration error " + wait(360), "target: p95 ≤ " + wait(3600), "p95 over 4× the target (in the table)"},
		chartTrend: {"GPU-hours allocated", "GPU-hours used", "GPU-hours lost", "utilisation, %", "occupancy, %"},
	}
	for id, entries := range legends {
		texts := svgTexts(t, string(cs[id].SVG))
		isLegend := map[string]bool{}
		for _, e := range entries {
			isLegend[e] = true
		}
		lowestOther := 1e9
		var legend []svgText
		for _, tx := range texts {
			if tx.rotated {
				continue
			}
			entry := false
			for e := range isLegend {
				if tx.text == e || strings.HasPrefix(tx.text, e+" (") {
					entry = true
				}
			}
			if entry {
				legend = append(legend, tx)
			} else {
				lowestOther = min(lowestOther, tx.y)
			}
		}
		if len(legend) < len(entries) {
			t.Errorf("%s: %d legend entries found, want %d (%q)", id, len(legend), len(entries), entries)
			continue
		}
		for _, l := range legend {
			if l.y >= lowestOther {
				t.Errorf("%s: legend entry %q at y %.1f is not below the axes (lowest other text at %.1f)", id, l.text, l.y, lowestOther)
			}
			if end := l.x + float64(textWidth(l.text, sizeLeg)); end > float64(chartW) {
				t.Errorf("%s: legend entry %q ends at %.1f, past the chart's %v", id, l.text, end, chartW)
			}
		}
		// Entries in one row do not overlap.
		for i, a := range legend {
			for _, b := range legend[i+1:] {
				if a.y != b.y {
					continue
				}
				l, r := a, b
				if r.x < l.x {
					l, r = r, l
				}
				if l.x+float64(textWidth(l.text, sizeLeg)) > r.x-legThumb {
					t.Errorf("%s: legend entries %q and %q overlap", id, l.text, r.text)
				}
			}
		}
	}
}

// TestLegendRows: entries wrap into rows by their measured width.
func TestLegendRows(t *testing.T) {
	items := []legendItem{item("a"), item("b"), item(strings.Repeat("wide ", 12))}
	width := textWidth(strings.Repeat("wide ", 12), sizeLeg) + legThumb + legGap + 1
	row, x, rows := legendRows(items, width)
	if rows != 2 || row[0] != 0 || row[1] != 0 || row[2] != 1 || x[2] != 0 {
		t.Errorf("rows %d, entries in rows %v at %v; want a and b in row 0, the wide one alone in row 1", rows, row, x)
	}
	if _, _, n := legendRows(nil, 100); n != 0 {
		t.Errorf("no entries: %d rows", n)
	}
	if got := legendText(strings.Repeat("x", 100)); len([]rune(got)) != legendMax {
		t.Errorf("a 100-rune name is shown as %d runes, want %d", len([]rune(got)), legendMax)
	}
}

// TestDailyChartCapacityAndPending: the capacity line is drawn at the
// inventory's GPUs × 24 and the pending demand as a line of its own.
func TestDailyChartCapacityAndPending(t *testing.T) {
	cs := renderCharts(t, fixture())
	svg := html.UnescapeString(string(cs[chartDaily].SVG))
	for _, want := range []string{"capacity (32 GPUs × 24 h a day)", "pending demand", "GPU-hours per day", "day of the month (2026-11)"} {
		if !strings.Contains(svg, want) {
			t.Errorf("daily chart lacks %q", want)
		}
	}
	// The capacity is a stroked path of one step per day (two points
	// each) in the page's text colour, 1.5 points wide.
	capLine := regexp.MustCompile(`<path d="(M[^"]*)" style="fill:none;stroke:#24292F;stroke-width:1.5"`).FindStringSubmatch(svg)
	if capLine == nil {
		t.Fatal("daily chart has no capacity line")
	}
	if n := strings.Count(capLine[1], "L") + 1; n != 2*30 {
		t.Errorf("capacity line has %d points, want 60 (a step per day of November)", n)
	}
	if !strings.Contains(svg, "stroke:#C44E52") || !strings.Contains(svg, "stroke-dasharray") {
		t.Error("daily chart has no dashed pending line")
	}

	// Without an inventory: no capacity line, and the caption says why.
	d := fixture()
	d.Workload.Headline.InventoryGPUs = 0
	for i := range d.Workload.Daily {
		d.Workload.Daily[i].Capacity = 0
	}
	c := renderCharts(t, d)[chartDaily]
	if strings.Contains(string(c.SVG), "capacity (") || !strings.Contains(c.Caption, "capacity unknown") {
		t.Errorf("no inventory: caption %q, capacity drawn %v", c.Caption, strings.Contains(string(c.SVG), "capacity ("))
	}
}

// colourFill is how vgsvg writes a fill in the ramp's colour i.
func colourFill(i int) string {
	r, g, b, _ := newRamp(rampSteps)[i].RGBA()
	return fmt.Sprintf("fill:#%02X%02X%02X", r>>8, g>>8, b>>8)
}

// TestHeatmapColourBar: the colour bar shows every colour of the scale
// with its numbers from the quietest hour's GPUs to the busiest's, the
// quietest hours in the lightest colour and the busiest in the darkest;
// a week whose hours are all the same is one colour, said.
func TestHeatmapColourBar(t *testing.T) {
	d := fixture() // 4 GPUs at night and weekends, 14 to 17 on weekday days
	c := renderCharts(t, d)[chartHeatmap]
	svg := string(c.SVG)
	for i := range rampSteps {
		if !strings.Contains(svg, colourFill(i)) {
			t.Errorf("colour bar lacks colour %d (%s)", i, colourFill(i))
		}
	}
	texts := map[string]bool{}
	for _, tx := range svgTexts(t, svg) {
		texts[tx.text] = true
	}
	for _, want := range []string{"4", "17", "GPUs allocated", "Mon", "Sun", "00:00", "hour of the day (local time)"} {
		if !texts[want] {
			t.Errorf("heat map lacks the text %q", want)
		}
	}
	if !strings.Contains(c.Caption, "from 4 GPUs in the quietest hour, lightest, to 17 in the busiest, darkest") || !strings.Contains(c.Caption, "the inventory has 32 GPUs") {
		t.Errorf("caption %q does not give the scale", c.Caption)
	}
	// 168 − 5 × 11 cells at 4 GPUs: the lightest colour, and once in the
	// bar; 5 × 2 at 17 (11:00 and 15:00 on weekdays): the darkest.
	if n := strings.Count(svg, colourFill(0)+`"`); n != 168-55+1 {
		t.Errorf("lightest colour %d times, want the %d quiet cells and the bar's", n, 168-55)
	}
	if n := strings.Count(svg, colourFill(rampSteps-1)+`"`); n != 5*2+1 {
		t.Errorf("darkest colour %d times, want the busiest cells and the bar's", n)
	}

	// Every hour the same: every cell the darkest, said.
	for day := range 7 {
		for h := range 24 {
			d.Workload.HourOfWeek[day][h] = 8
		}
	}
	c = renderCharts(t, d)[chartHeatmap]
	if n := strings.Count(string(c.SVG), colourFill(rampSteps-1)); n < 168 {
		t.Errorf("a flat week: darkest colour %d times, want every cell", n)
	}
	if !strings.Contains(c.Caption, "every hour of the week the same: 8 GPUs") {
		t.Errorf("a flat week: caption %q", c.Caption)
	}
}

// TestWaitChartLogScale: a median of a minute and a p95 of hours are
// both readable: the axis is logarithmic, ticks carry their units, and
// the minute's marker sits well above the axis' foot.
func TestWaitChartLogScale(t *testing.T) {
	c := renderCharts(t, fixture())[chartWait]
	svg := string(c.SVG)
	texts := svgTexts(t, svg)
	ticks := map[string]float64{}
	for _, tx := range texts {
		ticks[tx.text] = tx.y
	}
	for _, want := range []string{"1 s", "1 min", "1 h", "queue wait (log scale)", "debug", "gpu"} {
		if _, ok := ticks[want]; !ok {
			t.Errorf("wait chart lacks %q", want)
		}
	}
	// Log scale: 1 s → 1 min and 1 min → 1 h are equally far apart.
	s, m, h := ticks["1 s"], ticks["1 min"], ticks["1 h"]
	if d1, d2 := m-s, h-m; d1 <= 0 || d2/d1 < 0.98 || d2/d1 > 1.02 {
		t.Errorf("tick spacing 1 s→1 min %.1f, 1 min→1 h %.1f: not logarithmic", d1, d2)
	}
	// Circles for p50, filled triangles for p95: two of each.
	if n := strings.Count(svg, "A4,4 0 1 1"); n < 2*2 {
		t.Errorf("%d circle arcs, want the p50 markers", n)
	}
	if !strings.Contains(c.Caption, "logarithmic") {
		t.Errorf("caption %q does not say the axis is logarithmic", c.Caption)
	}
}

// TestVRAMChartPanels: one panel per model, titled with its full name, in
// GPU-hours, with the preallocated GPU-hours as their own bar.
func TestVRAMChartPanels(t *testing.T) {
	d := fixture()
	c := renderCharts(t, d)[chartVRAM]
	texts := map[string]int{}
	for _, tx := range svgTexts(t, string(c.SVG)) {
		texts[tx.text]++
	}
	for _, m := range d.Workload.Models {
		if texts[m.Model] != 1 {
			t.Errorf("panel title %q appears %d times, want once", m.Model, texts[m.Model])
		}
	}
	if texts["GPU-hours"] != 2 || texts["memory peak, % of the card"] != 2 || texts["prealloc."] != 2 {
		t.Errorf("axis labels per panel: %v", texts)
	}
	if !strings.Contains(string(c.SVG), "fill:#C44E52") {
		t.Error("no preallocated bar")
	}
	// A month of counts only (an old database's JSON): no GPU-hours to
	// draw, no chart made from job counts.
	for i := range d.Workload.Models {
		d.Workload.Models[i].VRAMHistGPUHours, d.Workload.Models[i].PreallocatedGPUHours = [10]float64{}, 0
	}
	if c := renderCharts(t, d)[chartVRAM]; c.SVG != "" {
		t.Error("VRAM chart drawn without GPU-hours")
	}
}

// TestTrendChart: two months or more give a trend; one does not.
func TestTrendChart(t *testing.T) {
	c := renderCharts(t, fixture())[chartTrend]
	texts := map[string]bool{}
	for _, tx := range svgTexts(t, string(c.SVG)) {
		texts[tx.text] = true
	}
	for _, want := range []string{"2026-09", "2026-10", "2026-11", "GPU-hours", "per cent"} {
		if !texts[want] {
			t.Errorf("trend chart lacks %q", want)
		}
	}
	d := fixture()
	d.Earlier = nil
	if c := renderCharts(t, d)[chartTrend]; c.SVG != "" || c.Empty == "" {
		t.Error("trend chart drawn for one month")
	}
}

// TestNiceScale: the colour bar's ticks are round and start and end at
// the ends of the observed range.
func TestNiceScale(t *testing.T) {
	for _, tt := range []struct {
		lo, hi float64
		want   string
	}{
		{0, 32, "0 10 20 32"}, {0, 4, "0 1 2 3 4"}, {0, 1, "0 0.5 1"}, {0, 100, "0 50 100"}, {0, 7, "0 2 4 6 7"},
		{812.4, 951.7, "812.4 850 900 951.7"}, {0.12, 0.4, "0.12 0.2 0.3 0.4"}, {4, 17, "4 10 15 17"},
	} {
		var got []string
		for _, tk := range scaleTicks(tt.lo, tt.hi) {
			got = append(got, tk.Label)
		}
		if strings.Join(got, " ") != tt.want {
			t.Errorf("scaleTicks(%v, %v) = %q, want %q", tt.lo, tt.hi, got, tt.want)
		}
	}
}
