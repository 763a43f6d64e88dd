// Package jobsource is where every reader of gpuprof gets its jobs: it
// picks the collector, the local database or the agent's query socket
// (Open), and scopes the caller through store.Reader, so that a command
// cannot read unscoped by accident. It hands the window pipeline
// (package monthly) one Scope (Source.Scope: the caller as one
// store.Caller, where the jobs are read from, the scoped reader), which
// the pipeline binds to the one cluster an answer is for (Scope.Bind,
// with the one rule that binds a slurm.conf to a cluster's jobs:
// BindSlurmConf, BindConf) and reads windows through (Scope.Input; a
// day's jobs with its notices in one pass, Scope.InputAndNotices, for the
// admins' digest; the newest jobs of a month bound to their one cluster
// after the read, Query.Newest and ConfOfRead, for the TUI's summary). It
// imports nothing of the pipeline, and hands an analysis input out only
// through a Scope (internal/archtest).
//
// It reads files (slurm.conf, gres.conf) and opens the database or a
// socket; it decides no access itself (the store and the servers in
// collect do) and renders nothing: the commands print what it returns.
package jobsource
