package report

import (
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// months returns the earlier months and this one, oldest first, for the
// comparison table and the trend chart.
func months(d *Data) []MonthHeadline {
	out := make([]MonthHeadline, 0, len(d.Earlier)+1)
	out = append(out, d.Earlier...)
	return append(out, MonthHeadline{Month: d.Month, Headline: d.Workload.Headline, LostGPUHours: d.Workload.LostGPUHours})
}

// trendChart is the months side by side: GPU-hours allocated, used and
// lost in one panel, utilisation and occupancy in the other. A month
// without GPU readings (or without an inventory) has no point on the
// lines it cannot say.
func trendChart(d *Data) (chart, error) {
	c := chart{ID: chartTrend, Caption: "This month and the earlier ones: GPU-hours per month (left) and utilisation and occupancy (right)"}
	ms := months(d)
	if len(ms) < 2 {
		c.Empty = "No earlier month is on record: a trend needs two months or more."
		return c, nil
	}
	type series struct {
		name string
		col  int // palette6 index
		at   func(m MonthHeadline) (float64, bool)
	}
	always := func(f func(MonthHeadline) float64) func(MonthHeadline) (float64, bool) {
		return func(m MonthHeadline) (float64, bool) { return f(m), true }
	}
	measured := func(f func(MonthHeadline) float64) func(MonthHeadline) (float64, bool) {
		return func(m MonthHeadline) (float64, bool) { return f(m), m.Headline.MeasuredGPUHours > 0 }
	}
	hoursSeries := []series{
		{"GPU-hours allocated", 0, always(func(m MonthHeadline) float64 { return m.Headline.AllocatedGPUHours })},
		{"GPU-hours used", 1, measured(func(m MonthHeadline) float64 { return m.Headline.UsedGPUHours })},
		{"GPU-hours lost", 3, always(func(m MonthHeadline) float64 { return m.LostGPUHours })},
	}
	pctSeries := []series{
		{"utilisation, %", 2, measured(func(m MonthHeadline) float64 { return 100 * m.Headline.Utilisation })},
		{"occupancy, %", 4, func(m MonthHeadline) (float64, bool) {
			return 100 * m.Headline.Occupancy, m.Headline.CapacityGPUHours > 0
		}},
	}
	step := max(1, (len(ms)+3)/4)
	var ticks []plot.Tick
	for i, m := range ms {
		if i%step == 0 || i == len(ms)-1 {
			ticks = append(ticks, plot.Tick{Value: float64(i), Label: shortLabel(m.Month)})
		}
	}
	var legend []legendItem
	panel := func(yLabel string, ss []series) (*plot.Plot, error) {
		p := newPlot("", "month", yLabel)
		top := 0.0
		for _, s := range ss {
			// Points of the months that have the value; the line is
			// broken across a month that has not (it says nothing there).
			var pts plotter.XYs
			var segs []plotter.XYs
			var seg plotter.XYs
			for i, m := range ms {
				v, ok := s.at(m)
				if !ok {
					if len(seg) > 0 {
						segs, seg = append(segs, seg), nil
					}
					continue
				}
				pts = append(pts, plotter.XY{X: float64(i), Y: v})
				seg = append(seg, plotter.XY{X: float64(i), Y: v})
				top = max(top, v)
			}
			if len(seg) > 0 {
				segs = append(segs, seg)
			}
			if len(pts) == 0 {
				continue
			}
			col := palette6[s.col]
			l, err := addLines(p, segs, col)
			if err != nil {
				return nil, err
			}
			sc, err := plotter.NewScatter(pts)
			if err != nil {
				return nil, err
			}
			sc.Color, sc.Shape, sc.Radius = col, draw.CircleGlyph{}, vg.Points(2.5)
			p.Add(sc)
			legend = append(legend, item(s.name, l, sc))
		}
		p.X.Min, p.X.Max = -0.3, float64(len(ms)-1)+0.3
		p.X.Tick.Marker = fixedTicks(ticks)
		p.Y.Max = max(top*1.1, 1)
		return p, nil
	}
	left, err := panel("GPU-hours", hoursSeries)
	if err != nil {
		return c, err
	}
	right, err := panel("per cent", pctSeries)
	if err != nil {
		return c, err
	}
	f := &figure{width: chartW, panelH: 220, cols: 2, panels: []*plot.Plot{left, right}, legend: legend}
	svg, err := f.render()
	c.SVG = svg
	return c, err
}
