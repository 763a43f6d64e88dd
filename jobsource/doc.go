// Package jobsource is where every reader of gpuprof gets its jobs: it
// picks the collector, the local database or the agent's query socket
// (Open), and scopes the caller through store.Reader, so that a command
// cannot read unscoped by accident. It also holds the one rule that binds
// a slurm.conf to a cluster's jobs (BindSlurmConf, BindConf) and chooses
// the one cluster an answer is for (Source.ForCluster).
//
// It reads files (slurm.conf, gres.conf) and opens the database or a
// socket; it decides no access itself (the store and the servers in
// collect do) and renders nothing: the commands print what it returns.
package jobsource
