package tui

import (
	"strings"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/internal/present"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/store"
)

// row is one job of the list, analysed and formatted once when its page
// arrives. Strings that came from users are already sanitised.
type row struct {
	cluster, jobID string // the key, raw, for loading the detail
	id             string // as Slurm prints it (53_1, 60+1), sanitised
	name, user     string
	state          string
	start          string
	elapsed        string
	gpus           string // held/used (analysis.Shown)
	vram           string // peak/card
	util           string
	class          string
	badges         string
}

// rowOf analyses one job for the list. now is the end of a job still
// running.
func rowOf(v store.JobView, c analysis.Config, now time.Time) row {
	j := analysis.FromView(v.SchedView(), v.Profiles)
	m := analysis.Measure(j, c)
	cls, _ := analysis.Classify(j, c)
	r := row{
		cluster: v.Cluster,
		jobID:   v.JobID,
		id:      sanitise(v.SlurmID()),
		name:    sanitise(j.Name),
		user:    sanitise(j.User),
		state:   stateLabel(j.State),
		start:   formatStart(m.Start, now.Location()),
		elapsed: "-",
		vram:    "-",
		util:    "-",
		class:   "-",
		badges:  badges(analysis.Diagnose(j, c)),
	}
	switch {
	case m.ElapsedValid:
		r.elapsed = slurmext.FormatDuration(m.Elapsed, false)
	case !m.Start.IsZero() && !m.Outcome.Finished() && now.After(m.Start):
		r.elapsed = slurmext.FormatDuration(now.Sub(m.Start), false) // still running
	}
	// GPUS and UTIL are the figures every page shows (analysis.Shown).
	s := m.Shown()
	r.gpus = present.GPUs(s.GPUs, s.Used, s.UsedKnown)
	if cls != analysis.ClassUnknown {
		r.class = cls.String() // the one name of each class, as the report and the CLI print it
	}
	r.vram = vramLabel(m)
	if s.UtilKnown {
		r.util = present.Util(s.Util) + "%"
	}
	return r
}

// vramLabel is the memory peak over the card, "61/80G"; "pre 78/80G" is a
// framework's preallocation, not a need.
func vramLabel(m analysis.Metrics) string {
	switch {
	case m.VRAMPeakBytesValid && m.VRAMCard > 0:
		return present.GiB(m.VRAMPeak) + "/" + present.GiB(m.VRAMCard) + "G"
	case m.VRAMPeakBytesValid:
		return present.GiB(m.VRAMPeak) + "G"
	case m.Preallocated:
		return "prealloc"
	}
	return "-"
}

// stateLabel shortens Slurm states that would not fit the column.
func stateLabel(s slurmext.JobState) string {
	switch s {
	case "":
		return "-"
	case slurmext.StateOutOfMemory:
		return "OOM"
	}
	return sanitise(string(s))
}

// badgeNames are the bottlenecks' short names for the list.
var badgeNames = map[analysis.Kind]string{
	analysis.KindVRAMBound:       "VRAM",
	analysis.KindHostMemoryBound: "HOSTMEM",
	analysis.KindComputeBound:    "COMPUTE",
	analysis.KindIOBound:         "IO",
	analysis.KindUnderused:       "UNUSED",
	analysis.KindQueueBound:      "QUEUE",
}

func badges(bs []analysis.Bottleneck) string {
	if len(bs) == 0 {
		return ""
	}
	names := make([]string, len(bs))
	for i, b := range bs {
		names[i] = badgeNames[b.Kind]
	}
	return strings.Join(names, ",")
}
