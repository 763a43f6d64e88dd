// Package monthly makes the monthly report's data (report.Data) for one
// cluster and month: it reads the month once through a Source (the
// analysis input, and the notices' tally from the same pass), and runs
// the analysis, the simulated capacity plan, the workload summary and the
// earlier months' headlines, then assembles, titles and (when asked)
// anonymises what package report renders. It also finds the last
// complete month with jobs, and runs the same read, analysis and
// simulated plan for gpuprof plan and recommend over any window
// (AnalyseAndPlan; its not-simulated line is plan's own). Reports runs
// gpuprof report's whole pipeline: the month (ParseMonth, or the last
// one with jobs), each cluster of it bound in turn (ClusterSource), each
// report built and handed to the caller to write (report.WriteFiles).
//
// It sits between the readers and report: report may not read jobs or
// compute statistics, so the pipeline that does both lives here, over a
// Source that the caller implements with its own, already scoped reader
// (jobsource.Source: the collector, the local database or the agent's
// query socket). It must not open a database, the network or a file,
// nor decide who may read what: the Source does. Choosing the Source
// (which binds each cluster's slurm.conf: ClusterSource.Bind), writing
// the files and printing are the command's (Out).
package monthly
