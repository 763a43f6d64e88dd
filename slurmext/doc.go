// Package slurmext holds everything Slurm-shaped that gpuprof needs to
// understand: the environment of a slurmd Prolog/Epilog and of slurmctld's
// jobcomp/script, Slurm durations, times, job states (JobState: which are final or lost, their
// outcome classes, the one rule analysis, TUI and report apply), TRES strings and job ids (every
// job id gpuprof reads passes ValidJobID), hostlist and index list
// expressions, gres.conf and slurm.conf values, slurmd's layout on a node
// (the cgroup paths of jobs, step-socket names, SlurmdSpoolDir and its %h
// and %n, the default gres.conf path), and the mapping of GRES device files to device
// minor numbers.
//
// The parsers are pure and bounded: they never panic, never allocate in
// proportion to a number written in their input (a range such as
// "node[0-4294967295]" is refused, not expanded), and report malformed values
// as errors or, in a hook environment, as notes, because a hook that fails
// drains the node. Slurm's configuration syntax (slurm.conf, gres.conf and
// the files they Include) has one reader here (confparse.go) and one model,
// ClusterConf, that every other package takes. Only DeviceMinor,
// ClusterName, ConfClusterName, SlurmdSpoolDir, ReadConfFile and its
// callers (ReadConfText, LoadClusterConf, LoadGresFile) and FindSlurmConf
// touch the filesystem (they read).
//
// JobRecord is the scheduler's view of a job that jobcomp and sacct both
// produce. sacct's output (-P text and --json) has its own reader in the
// subpackage sacct, built on this package's rules (states, TRES, durations,
// hostlists, job ids, the notes of a malformed field); CheckRecord and
// CheckMessage are the bounds every reader here and there guarantees.
//
// This package must not import NVML, SQLite, cobra or any other gpuprof
// package but termtext (the one rule for untrusted text, a leaf), must not
// execute Slurm commands, and must not write anything.
package slurmext

import "errors"

// Sentinel errors. Callers test them with errors.Is; the functions wrap them
// with the offending value (quoted and shortened, so logs stay safe).
var (
	// ErrBadEnv means a hook environment lacks what a hook cannot do without:
	// a valid SLURM_JOB_ID.
	ErrBadEnv = errors.New("unusable hook environment")
	// ErrBadIndexList means an index list such as "0,2-3" is malformed.
	ErrBadIndexList = errors.New("malformed index list")
	// ErrBadHostlist means a hostlist expression such as "gpu[01-04]" is
	// malformed.
	ErrBadHostlist = errors.New("malformed hostlist expression")
	// ErrTooLarge means an expression is well formed but expands beyond the
	// bound this package enforces (MaxIndexList, MaxHostlistHosts,
	// MaxGresDevices).
	ErrTooLarge = errors.New("expands beyond the size bound")
	// ErrBadExitCode means an "exit:signal" pair is malformed.
	ErrBadExitCode = errors.New("malformed exit code")
	// ErrBadGresConf means gres.conf cannot be parsed.
	ErrBadGresConf = errors.New("malformed gres.conf")
	// ErrNoMinor means a path is neither a character device nor named with a
	// trailing device number.
	ErrNoMinor = errors.New("no device minor number")
)
