package analysis

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// Carbon is the emission factor of the electricity the GPUs drew, in
// gCO2e per kWh: a fixed one, or one per hour. Input.Carbon nil is no
// factor: CO2e is then absent everywhere, never a guessed default.
type Carbon struct {
	// Fixed applies to every hour Hourly does not list (0: none).
	Fixed float64
	// Hourly maps the unix second of each hour's start to its factor.
	Hourly map[int64]float64
	// Source says where the factors came from, as outputs print it:
	// "fixed 350 gCO2e/kWh", "hourly factors from FILE".
	Source string
}

// Intensity is the factor over [from, to): the mean of the hours it
// overlaps, each its hourly factor or else the fixed one, weighted by the
// overlap. false when an hour of it has neither (its CO2e is unknown) or
// the span is empty or unknown.
func (c *Carbon) Intensity(from, to time.Time) (float64, bool) {
	if c == nil {
		return 0, false
	}
	if c.Hourly == nil {
		return c.Fixed, c.Fixed > 0
	}
	if from.IsZero() || !to.After(from) {
		return 0, false
	}
	factor := func(h int64) (float64, bool) {
		if f, ok := c.Hourly[h]; ok {
			return f, true
		}
		return c.Fixed, c.Fixed > 0
	}
	var sum, secs float64
	for h := from.Unix() / 3600 * 3600; h < to.Unix(); h += 3600 {
		f, ok := factor(h)
		if !ok {
			return 0, false
		}
		lo, hi := max(h, from.Unix()), min(h+3600, to.Unix())
		if hi > lo {
			sum += f * float64(hi-lo)
			secs += float64(hi - lo)
		}
	}
	if secs == 0 {
		// Under a second: the hour it began in.
		return factor(from.Unix() / 3600 * 3600)
	}
	return sum / secs, true
}

// maxCarbonFactor bounds a plausible factor: the dirtiest grids emit
// about 1,000 gCO2e/kWh.
const maxCarbonFactor = 100_000

// ParseCarbonCSV reads hourly emission factors: one "hour,factor" line
// each, the hour an RFC 3339 time (its start; minutes and seconds must be
// zero), the factor in gCO2e/kWh. A first line whose factor is not a
// number is a header; blank lines and lines starting with # are skipped.
// A line that is not an hour and a factor, a factor out of [0, 100000) or
// an hour given twice is an error naming the line.
func ParseCarbonCSV(r io.Reader) (map[int64]float64, error) {
	out := map[int64]float64{}
	sc := bufio.NewScanner(r)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		hour, value, ok := strings.Cut(line, ",")
		if !ok {
			return nil, fmt.Errorf("line %d: want hour,gco2e_per_kwh, not %q", n, line)
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			if len(out) == 0 && n == 1 {
				continue // a header
			}
			return nil, fmt.Errorf("line %d: factor %q: not a number", n, strings.TrimSpace(value))
		}
		if math.IsNaN(f) || f < 0 || f >= maxCarbonFactor {
			return nil, fmt.Errorf("line %d: factor %v out of [0, %d) gCO2e/kWh", n, f, maxCarbonFactor)
		}
		t, err := time.Parse(time.RFC3339, strings.TrimSpace(hour))
		if err != nil {
			return nil, fmt.Errorf("line %d: hour %q: want RFC 3339 (2026-11-01T13:00:00Z)", n, strings.TrimSpace(hour))
		}
		if t.Unix()%3600 != 0 {
			return nil, fmt.Errorf("line %d: %s is not the start of an hour", n, strings.TrimSpace(hour))
		}
		if _, dup := out[t.Unix()]; dup {
			return nil, fmt.Errorf("line %d: hour %s given twice", n, strings.TrimSpace(hour))
		}
		out[t.Unix()] = f
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no hourly factor")
	}
	return out, nil
}

// JobCO2e is a job's CO2e in kilograms: its GPUs' energy (every measured
// GPU's, Metrics.EnergyJ) times the factor over its run, from its start
// to its end (to now while it runs). false without a factor, without the
// energy of every measured GPU, or with an hour of the run that has none.
func (c *Carbon) JobCO2e(j Job, cfg Config, now time.Time) (kwh, kg float64, ok bool) {
	if c == nil {
		return 0, 0, false
	}
	m := Measure(j, cfg)
	if !m.EnergyValid {
		return 0, 0, false
	}
	end := j.End
	if end.IsZero() {
		end = now
	}
	f, ok := c.Intensity(j.Start, end)
	if !ok {
		return 0, 0, false
	}
	kwh = m.EnergyJ / joulesPerKWh
	return kwh, kwh * f / 1000, true
}
