// Package sacct reads Slurm's sacct output into slurmext.JobRecords: the
// -P text (Reader: the header or a given column list, the layout probe that
// refuses text which does not fit its columns, step lines folded into their
// job with Slurm's GPU and host readings) and the --json of 22.05–25.x
// (ParseJSON). Format is the column list gpuprof asks sacct for.
//
// Slurm's rules that other readers share (job states, TRES, durations and
// times, hostlists, job ids, the bounds and notes of untrusted fields) stay
// in slurmext; this package builds records with them and holds only what is
// sacct's own. Like slurmext it is pure and bounded: it never panics on its
// input, never runs sacct, and writes nothing.
package sacct
