// Package e2e holds gpuprof's end-to-end tests: the real gpuprof binary,
// driven by a real single-node Slurm (contrib/slurm/testcluster.sh) whose
// four GPUs are fake device files backed by the simulated GPU node, and by
// real munge for the collector's authentication.
//
// It has no code of its own and must not be imported. The Slurm tests need
// root (Slurm daemons, device files), the collector tests munged and root
// (to create Unix users); the jobcomp lock test needs neither. They skip
// where they cannot run (not root, Slurm not installable), except when
// CI=true, where that is a failure. Set
// GPUPROF_BIN to test a prebuilt binary; otherwise the tests build
// ./cmd/gpuprof once per run.
//
// Each real-Slurm test starts a cluster of its own and most spend their
// minutes waiting on sleeping jobs, so they run in parallel, four at a
// time unless go test is given -parallel (its default, GOMAXPROCS, is 2 on
// a 2-core machine); testcluster.sh keeps their ports, directories and
// slurmstepds apart. The tests that measure wall-clock time
// (TestJobCompDeadlineWithLockedDB, TestPrometheusScrape) are sequential:
// go test runs them first, with no other test of this package beside
// them.
package e2e
