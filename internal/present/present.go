package present

import (
	"fmt"
	"strconv"

	"github.com/gpuprof/gpuprof/gpu"
)

// Activity writes a percentage of GPU activity (0–100) without its unit,
// with the precision its size needs: "92", "4.5", "0.02", "0". A loop of
// tiny kernels reads 0.02 % of the SMs; rounding that to "0" would say
// idle. Callers add " %" (or "%" in the terminal UI's compact lines).
func Activity(v float64) string {
	switch {
	case v <= 0:
		return "0"
	case v < 0.095:
		return trim(strconv.FormatFloat(v, 'f', 2, 64))
	case v < 9.95:
		return trim(strconv.FormatFloat(v, 'f', 1, 64))
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

// GPUs writes the GPUs a job held and used (analysis.Shown): "2/1";
// "2/-" when which were used is unknown (no utilisation reading).
func GPUs(held, used int, usedKnown bool) string {
	u := Missing
	if usedKnown {
		u = strconv.Itoa(used)
	}
	return strconv.Itoa(held) + "/" + u
}

// ShardsOf writes the shards a job held of its GPUs (analysis.Shown):
// "2 shards of 1 GPU"; "" for a job of whole GPUs (shards 0), so that a
// page adds it only to a shard job's line.
func ShardsOf(shards, gpus int) string {
	if shards <= 0 {
		return ""
	}
	return Count(shards, "shard", "shards") + " of " + Count(max(gpus, 1), "GPU", "GPUs")
}

// GPUsPerRun writes a recurring task's GPUs held and used, each the mean
// per run (analysis.TaskProfile): "2.0/1.0"; "2.0/1.0*" when only
// usageRuns of its runs had utilisation readings, the used mean being
// over those; "2.0/–" when none had (used is nil).
func GPUsPerRun(held float64, used *float64, usageRuns, runs int) string {
	if used == nil {
		return fmt.Sprintf("%.1f/–", held)
	}
	mark := ""
	if usageRuns < runs {
		mark = "*"
	}
	return fmt.Sprintf("%.1f/%.1f%s", held, *used, mark)
}

// Util writes a job's or a GPU's mean utilisation (the duty cycle NVML
// reports, 0–100) without its unit, in whole percent: "48", "0". NVML
// reads whole percents; a decimal would claim a precision it has not.
// Callers add " %" (or "%" in the terminal UI's compact lines).
func Util(v float64) string {
	return strconv.FormatFloat(max(v, 0), 'f', 0, 64)
}

// trim drops a fractional part of zeros: "1.0" → "1", "0.10" → "0.1".
func trim(s string) string {
	for len(s) > 1 && s[len(s)-1] == '0' {
		s = s[:len(s)-1]
	}
	if s[len(s)-1] == '.' {
		s = s[:len(s)-1]
	}
	return s
}

// Temperature writes a GPU's temperature in degrees Celsius, as NVML
// reads it (whole degrees): "71 °C".
func Temperature(c uint32) string { return strconv.FormatUint(uint64(c), 10) + " °C" }

// XIDClass is the word for whose fault an XID is: "application" (the
// job's program), "hardware" (the GPU or its driver) or "unclassified".
func XIDClass(c gpu.XIDClass) string { return string(c) }

// XID writes one XID code with its name, its class and how often it came:
// "79 GPU has fallen off the bus (hardware)", "31 GPU memory page fault:
// an illegal address (application) ×3".
func XID(code uint64, count int) string {
	x := gpu.XID(code)
	s := fmt.Sprintf("%d %s (%s)", code, x.Name, XIDClass(x.Class))
	if x.Class == gpu.XIDUnclassified {
		s = fmt.Sprintf("%d (%s)", code, XIDClass(x.Class))
	}
	if count > 1 {
		s += fmt.Sprintf(" ×%d", count)
	}
	return s
}

// CO2e writes emissions given in kilograms of CO2e: grams under 1 kg
// ("45 g CO2e"), kilograms to one decimal ("123.4 kg CO2e"), tonnes to
// one decimal from 1,000 kg ("1.2 t CO2e").
func CO2e(kg float64) string {
	switch {
	case kg < 1:
		return strconv.FormatFloat(max(kg, 0)*1000, 'f', 0, 64) + " g CO2e"
	case kg < 1000:
		return strconv.FormatFloat(kg, 'f', 1, 64) + " kg CO2e"
	}
	return strconv.FormatFloat(kg/1000, 'f', 1, 64) + " t CO2e"
}
