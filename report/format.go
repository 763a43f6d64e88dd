package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/internal/present"
)

// dash stands for a number that is missing or cannot be shown.
const dash = "—"

// num prints v with dec decimals and thin thousands separators
// ("12,345.6"); a non-finite v prints as a dash.
func num(v float64, dec int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return dash
	}
	s := strconv.FormatFloat(v, 'f', dec, 64)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	intPart, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	if neg && strings.Trim(s, "0.") != "" {
		b.WriteByte('-')
	}
	for i, c := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if frac != "" {
		b.WriteByte('.')
		b.WriteString(frac)
	}
	return b.String()
}

// count prints an integer with thousands separators.
func count(n int) string { return num(float64(n), 0) }

// gpus prints a number of GPUs held, which shard jobs make fractional:
// "7", "6.38".
func gpus(v float64) string {
	if v == math.Trunc(v) {
		return num(v, 0)
	}
	return num(v, 2)
}

// hours prints GPU-hours: one decimal below 1,000, none above.
func hours(v float64) string {
	if math.Abs(v) >= 1000 {
		return num(v, 0)
	}
	return num(v, 1)
}

// pct prints a fraction (0–1) as a percentage with one decimal.
func pct(frac float64) string {
	if math.IsNaN(frac) || math.IsInf(frac, 0) {
		return dash
	}
	return num(frac*100, 1) + " %"
}

// points prints a value already in percent.
func points(v float64) string { return pct(v / 100) }

// seconds prints a duration given in seconds: "6h12m".
func seconds(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return dash
	}
	return analysis.FormatDuration(time.Duration(v * float64(time.Second)))
}

// times prints a ratio: "3.2×".
func times(v float64) string { return num(v, 1) + "×" }

// gib prints bytes in GiB.
func gib(b uint64) string {
	if b == 0 {
		return dash
	}
	return num(float64(b)/(1<<30), 0) + " GiB"
}

// share returns part/whole, 0 when whole is not positive. It only
// expresses a given number relative to a given total for display.
func share(part, whole float64) float64 {
	if !(whole > 0) {
		return 0
	}
	return part / whole
}

// words turns a snake_case key into words: "long_training" → "long training".
func words(s string) string { return strings.ReplaceAll(s, "_", " ") }

// confidence prints a recommendation's confidence (0–1) as a whole
// percentage, as gpuprof recommend does: "92 %".
func confidence(c float64) string {
	if math.IsNaN(c) || math.IsInf(c, 0) {
		return dash
	}
	return num(c*100, 0) + " %"
}

// kwh prints energy in kilowatt-hours: "1,234.5 kWh".
func kwh(v float64) string {
	if math.Abs(v) >= 1000 {
		return num(v, 0) + " kWh"
	}
	return num(v, 1) + " kWh"
}

// energyCells prints an energy figure and the share of GPU-hours it was
// measured on, "unknown" for both when nothing was measured: no reading
// is never written as 0 kWh.
func energyCells(e analysis.Energy) (energy, measured string) {
	if !e.Known() {
		return "unknown", "none"
	}
	return kwh(e.KWh), pct(e.Coverage)
}

// energyText is energyCells in one phrase.
func energyText(e analysis.Energy) string {
	if !e.Known() {
		return "unknown (no GPU recorded its energy)"
	}
	return fmt.Sprintf("%s (measured on %s of the GPU-hours)%s", kwh(e.KWh), pct(e.Coverage), co2eText(e))
}

// co2e prints emissions as every page does (present.CO2e): "12.3 kg
// CO2e", "1.2 t CO2e".
func co2e(kg float64) string { return present.CO2e(kg) }

// co2eText is ", 12.3 kg CO2e" (with the share of the energy that had a
// factor when not all of it did); empty without a factor.
func co2eText(e analysis.Energy) string {
	if e.CO2eKg == nil {
		return ""
	}
	if e.CO2eCoverage < 1-1e-9 {
		return fmt.Sprintf(", %s (on the %s of the energy with an hourly factor)", co2e(*e.CO2eKg), pct(e.CO2eCoverage))
	}
	return ", " + co2e(*e.CO2eKg)
}

// co2eCell is an energy's CO2e for a table: "unknown" without a reading
// or a factor for it.
func co2eCell(e analysis.Energy) string {
	if e.CO2eKg == nil {
		return "unknown"
	}
	return co2e(*e.CO2eKg)
}
