// Package hookproto is what the Slurm hooks, the spool and the node agent
// exchange: the job-start and job-end events (one type each), the agent
// socket's request, response and client, the kinds of spool records, and
// the rules both sides apply to an event (resolving a job's GPU references
// to devices, the empty profile of a starting job).
//
// The hooks import this package, not the agent: the client must not import
// the daemon. It must not sample GPUs, open the database or talk to Slurm.
package hookproto
