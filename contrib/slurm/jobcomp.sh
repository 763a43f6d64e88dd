#!/bin/sh
# Slurm jobcomp/script wrapper for gpuprof, on the slurmctld host. In
# slurm.conf:
#   JobCompType=jobcomp/script
#   JobCompLoc=/etc/slurm/gpuprof-jobcomp.sh
# Install as root, mode 0755.
#
# slurmctld runs jobcomp scripts one at a time and waits for each with no
# timeout, so a slow script stalls every later job record. `gpuprof jobcomp`
# finishes within jobcomp.deadline (1 s by default, typically a few ms),
# spools what the database could not take in time, and always exits 0.
[ -x /usr/local/sbin/gpuprof ] || exit 0
exec /usr/local/sbin/gpuprof jobcomp --config /etc/gpuprof/gpuprof.toml
