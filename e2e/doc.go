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
package e2e
