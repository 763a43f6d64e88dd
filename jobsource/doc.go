// Package jobsource is where every reader of gpuprof gets its jobs: it
// picks the collector, the local database or the agent's query socket
// (Open), and scopes the caller through store.Reader, so that a command
// cannot read unscoped by accident. It also holds the one rule that binds
// a slurm.conf to a cluster's jobs (BindSlurmConf, BindConf) and chooses
// the one cluster an answer is for (Source.ForCluster). It adapts a
// Source to the pipelines that read through an interface of their own:
// the monthly report and plan (Source.Monthly, monthly.ClusterSource) and
// the admins' digest (Source.Digest, notice.DaySource, which reads the
// day's jobs and notices in one pass: Source.InputAndNotices).
//
// It reads files (slurm.conf, gres.conf) and opens the database or a
// socket; it decides no access itself (the store and the servers in
// collect do) and renders nothing: the commands print what it returns.
package jobsource
