package report

import (
	"bytes"
	"html/template"
	"image/color"
	"os"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"

	"golang.org/x/image/font/opentype"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/font/liberation"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// The charts' frame: one font with the page (DejaVu Sans, the first
// family of report.css), legends drawn outside the data area with room
// measured from their text, and the SVG written for inlining.

// dejaVuSans is where Debian's fonts-dejavu-core puts DejaVu Sans, the
// page's first font family. A variable so that a test can point it at a
// missing file and see the fallback.
var dejaVuSans = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"

// svgFontFamily is the font-family every chart's text asks the browser
// for: the page's own first family, then the generic one.
const svgFontFamily = "DejaVu Sans, sans-serif"

// chartFont is the typeface charts measure and write their text with.
type chartFont struct {
	handler text.Handler
	font    font.Font
	// family is the name vgsvg writes as the text's font-family (the
	// font file's own family name), replaced by svgFontFamily.
	family string
	// slack widens measured text: 1 when the measuring font is the one
	// the browser draws with, more for the fallback, whose glyphs are
	// narrower than DejaVu Sans'.
	slack float64
}

// loadChartFont loads DejaVu Sans from path into a gonum font cache. When
// the file is missing or unreadable it falls back to the Liberation Sans
// that gonum embeds: the SVG still asks for DejaVu Sans (then
// sans-serif), and text is measured 15 % wider than Liberation Sans says,
// DejaVu Sans being the wider face, so that legends keep their room.
func loadChartFont(path string) chartFont {
	if raw, err := os.ReadFile(path); err == nil {
		if f, err := opentype.Parse(raw); err == nil {
			fnt := font.Font{Typeface: "DejaVu", Variant: "Sans"}
			cache := font.NewCache(font.Collection{{Font: fnt, Face: f}})
			return chartFont{handler: text.Plain{Fonts: cache}, font: fnt, family: "DejaVu Sans", slack: 1}
		}
	}
	fnt := font.Font{Typeface: "Liberation", Variant: "Sans"}
	cache := font.NewCache(liberation.Collection())
	return chartFont{handler: text.Plain{Fonts: cache}, font: fnt, family: "Liberation Sans", slack: 1.15}
}

var theChartFont = sync.OnceValue(func() chartFont { return loadChartFont(dejaVuSans) })

// Text sizes, in points: the page's body text is larger, but a chart of
// 600 points shown in a column of about that many pixels reads like this.
const (
	sizeTitle = 11
	sizeLabel = 10
	sizeTick  = 9
	sizeLeg   = 9.5
)

var (
	colInk  = color.RGBA{R: 0x24, G: 0x29, B: 0x2f, A: 0xff} // the page's text colour
	colGrid = color.RGBA{R: 0x8c, G: 0x95, B: 0x9f, A: 0xff}
)

// textStyle returns a text style in the chart font.
func textStyle(size vg.Length) text.Style {
	cf := theChartFont()
	return text.Style{Color: colInk, Font: font.From(cf.font, size), Handler: cf.handler}
}

// restyle puts every text of p in the chart font, keeping each style's
// alignment.
func restyle(p *plot.Plot) {
	set := func(s *text.Style, size vg.Length) {
		ns := textStyle(size)
		ns.XAlign, ns.YAlign, ns.Rotation = s.XAlign, s.YAlign, s.Rotation
		*s = ns
	}
	set(&p.Title.TextStyle, sizeTitle)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		set(&a.Label.TextStyle, sizeLabel)
		set(&a.Tick.Label, sizeTick)
		a.Color, a.Tick.Color = colInk, colInk
	}
	set(&p.Legend.TextStyle, sizeLeg)
	p.TextHandler = theChartFont().handler
}

// textWidth is the width s takes in the chart font at size, with the
// fallback's slack.
func textWidth(s string, size vg.Length) vg.Length {
	return vg.Length(float64(textStyle(size).Width(s)) * theChartFont().slack)
}

// legendMax is the most runes of a legend entry: every real GPU model,
// partition or series name is shorter; a longer one (a hostile name)
// ends in "…" rather than running off the chart.
const legendMax = 60

// legendItem is one legend entry: its full text and the thumbnails of
// the series it names.
type legendItem struct {
	label  string
	thumbs []plot.Thumbnailer
}

func item(label string, thumbs ...plot.Thumbnailer) legendItem {
	label = sanitize(label)
	if utf8.RuneCountInString(label) > legendMax {
		label = string([]rune(label)[:legendMax-1]) + "…"
	}
	return legendItem{label: label, thumbs: thumbs}
}

// figure is one chart: panels in a grid of cols columns, each panelH
// high, a legend below them laid out from its text widths, and an
// optional strip on the right (the heat map's colour bar) of rightW.
type figure struct {
	width  vg.Length
	panelH vg.Length
	cols   int
	panels []*plot.Plot
	legend []legendItem
	right  *plot.Plot
	rightW vg.Length
}

// Legend geometry, in points.
const (
	legThumb  = 18 // thumbnail width
	legGap    = 5  // thumbnail to text
	legColGap = 16 // entry to entry
	legRowH   = 15
	legPad    = 6 // above and below the legend
	// panelMargin is kept free at each panel's top and right.
	panelMargin = 8
)

// legendRows lays the entries out left to right in rows no wider than
// width, each entry as wide as its thumbnail and measured text; it
// returns each entry's row and x offset, and the number of rows.
func legendRows(items []legendItem, width vg.Length) (row []int, x []vg.Length, rows int) {
	row, x = make([]int, len(items)), make([]vg.Length, len(items))
	cur, r := vg.Length(0), 0
	for i, it := range items {
		w := legThumb + legGap + textWidth(it.label, sizeLeg)
		if cur > 0 && cur+w > width {
			r++
			cur = 0
		}
		row[i], x[i] = r, cur
		cur += w + legColGap
	}
	if len(items) == 0 {
		return row, x, 0
	}
	return row, x, r + 1
}

// legendHeight is the room the legend takes below the panels.
func (f *figure) legendHeight() vg.Length {
	_, _, rows := legendRows(f.legend, f.width-2*legPad)
	if rows == 0 {
		return 0
	}
	return vg.Length(rows)*legRowH + 2*legPad
}

// render draws the figure as SVG for inlining in HTML.
func (f *figure) render() (template.HTML, error) {
	cols := max(f.cols, 1)
	nRows := (len(f.panels) + cols - 1) / cols
	legH := f.legendHeight()
	height := vg.Length(nRows)*f.panelH + legH
	c := vgsvg.New(f.width, height)
	dc := draw.New(c)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())

	// Each panel keeps a margin at its top and right, so that the top
	// tick label and the last x tick label are not cut by the edge.
	panelW := (f.width - f.rightW) / vg.Length(cols)
	for i, p := range f.panels {
		r, k := i/cols, i%cols
		top := height - vg.Length(r)*f.panelH
		sub := draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: vg.Length(k) * panelW, Y: top - f.panelH},
			Max: vg.Point{X: vg.Length(k+1)*panelW - panelMargin, Y: top - panelMargin},
		}}
		p.Draw(sub)
	}
	if f.right != nil {
		sub := draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: f.width - f.rightW, Y: height - vg.Length(nRows)*f.panelH},
			Max: vg.Point{X: f.width - panelMargin, Y: height - panelMargin},
		}}
		if len(f.panels) > 0 {
			// The strip spans the first panel's data area, so that a
			// colour bar runs as high as the heat map beside it.
			first := draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{
				Min: vg.Point{X: 0, Y: height - f.panelH},
				Max: vg.Point{X: panelW - panelMargin, Y: height - panelMargin},
			}}
			da := f.panels[0].DataCanvas(first)
			sub.Min.Y, sub.Max.Y = da.Min.Y, da.Max.Y
		}
		f.right.Draw(sub)
	}
	f.drawLegend(dc, legH)
	return svgOf(c)
}

// drawLegend draws the entries in the band of height legH at the bottom.
func (f *figure) drawLegend(dc draw.Canvas, legH vg.Length) {
	row, x, rows := legendRows(f.legend, f.width-2*legPad)
	if rows == 0 {
		return
	}
	sty := textStyle(sizeLeg)
	sty.XAlign, sty.YAlign = draw.XLeft, draw.YCenter
	for i, it := range f.legend {
		mid := legH - legPad - (vg.Length(row[i])+0.5)*legRowH
		x0 := legPad + x[i]
		icon := &draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: x0, Y: mid - legRowH*0.35},
			Max: vg.Point{X: x0 + legThumb, Y: mid + legRowH*0.35},
		}}
		for _, t := range it.thumbs {
			t.Thumbnail(icon)
		}
		dc.FillText(sty, vg.Point{X: x0 + legThumb + legGap, Y: mid}, it.label)
	}
}

// xmlProlog is compiled on first use, not at every gpuprof start-up (issue #41).
var xmlProlog = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?s)^<\?xml[^>]*\?>\s*(<!--.*?-->\s*)?`)
})

// svgOf writes c as SVG for inlining in HTML: without the XML prolog and
// without the namespace declarations, which an inline <svg> does not need
// and which would be the only URLs in the file; every text in the page's
// font family.
func svgOf(c *vgsvg.Canvas) (template.HTML, error) {
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return "", err
	}
	s := xmlProlog().ReplaceAllString(b.String(), "")
	s = strings.Replace(s, `xmlns="http://www.w3.org/2000/svg"`, "", 1)
	s = strings.Replace(s, `xmlns:xlink="http://www.w3.org/1999/xlink"`, "", 1)
	s = strings.Replace(s, "<svg ", `<svg role="img" `, 1)
	s = strings.ReplaceAll(s, "font-family:"+theChartFont().family+";", "font-family:"+svgFontFamily+";")
	// The SVG comes from vgsvg, which escapes text; every label was
	// sanitised before it reached the plot.
	return template.HTML(s), nil //nolint:gosec // generated markup, text escaped by vgsvg
}
