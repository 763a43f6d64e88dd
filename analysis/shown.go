package analysis

// Shown is what every page shows of one job's GPUs and utilisation: the
// jobs table and its JSON, show, the terminal UI's list and detail, and,
// run by run through the task profiles, the report. It is the one rule
// for these figures, so that one job never shows two answers (issue #30:
// a shard job was 1/1 in the TUI and 0/1 in jobs, a 2-GPU job 48 % in
// one and 77 % in the other).
type Shown struct {
	// GPUs is how many GPUs the job held (Metrics.GPUs): the whole GPUs
	// requested, or those recorded when more; a shard job's GPU counts
	// one, as part of it was held.
	GPUs int
	// Shards is how many shards of those GPUs the job held (Metrics.Shards),
	// 0 for whole GPUs: a shard job is shown as one, never as holding its
	// GPU whole (issue #38).
	Shards int
	// Used is GPUs minus those unused (Metrics.UnusedGPUs: an idle
	// allocation, or a mean utilisation below classes.idle_util_max).
	// UsedKnown is false when no GPU of the job has a utilisation
	// reading: which were used is then unknown, not none.
	Used      int
	UsedKnown bool
	// Util is the job's mean utilisation, percent: the mean over its
	// GPUs with readings of each one's mean, the GPU-time-weighted value
	// the classes and the report read (Metrics.UtilMean), not the
	// busiest GPU's. UtilKnown is false without readings.
	Util      float64
	UtilKnown bool
}

// Shown derives the figures every page shows of the job m measures.
func (m *Metrics) Shown() Shown {
	s := Shown{GPUs: m.GPUs, Shards: m.Shards}
	if m.UtilMeanValid {
		s.Used, s.UsedKnown = max(m.GPUs-m.UnusedGPUs, 0), true
		s.Util, s.UtilKnown = m.UtilMean, true
	}
	return s
}
