// Package present formats the numbers gpuprof shows people, one function
// per form, so that every page writes a quantity the same way. It starts
// with the forms of GPU activity and XID errors (issue #28); other pages
// still carry their own formatters and move here as they are touched.
//
// It must not read anything or decide anything: values in, text out.
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
