package analysis

// JobFindings are what the analysis says of one job: its measures, its
// class with the reasons for it, its bottlenecks and the hints for its
// next submission, made by Examine. They head the job's fact sheet
// (Sheet, ExamineView), which gpuprof show and the TUI's detail both
// draw, so that the two cannot say different things of a job.
type JobFindings struct {
	Metrics     Metrics
	Class       Class
	Why         []Reason
	Bottlenecks []Bottleneck
	Hints       []Hint
}

// Examine analyses one job under c; types are the GPU types of its
// cluster (nil: none known), which a hint may suggest a smaller one of.
func Examine(j Job, c Config, types []GPUType) JobFindings {
	f := JobFindings{Metrics: Measure(j, c), Bottlenecks: Diagnose(j, c), Hints: Hints(j, c, types)}
	f.Class, f.Why = Classify(j, c)
	return f
}
