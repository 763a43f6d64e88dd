package jobsource

import (
	"os"
	"runtime/debug"
)

// analysisMemoryLimit is the soft memory limit of the commands that read a
// whole period into memory (profiles, recommend, plan, report): reading a
// million jobs from SQLite makes about 2 GB of short-lived garbage, and at
// Go's default pacing (GOGC=100) the heap grows to twice what is live
// before it is collected, so a month that needs 700 MB would hold 1.3 GB.
// Near the limit the collector runs sooner instead. It is soft: a larger
// month still fits, only with more collector work (Go caps that at about
// half the CPU). docs/benchmarks.md has the measurements.
const analysisMemoryLimit = 800 << 20

// limitMemory sets analysisMemoryLimit unless the user chose a limit with
// GOMEMLIMIT (or switched the collector off with GOGC=off, which the limit
// would then override).
func limitMemory() {
	if os.Getenv("GOMEMLIMIT") != "" || os.Getenv("GOGC") == "off" {
		return
	}
	debug.SetMemoryLimit(analysisMemoryLimit)
}
