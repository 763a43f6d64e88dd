#!/bin/sh
# Slurm Epilog wrapper for gpuprof. Install as root, mode 0755, e.g.
#   install -m 0755 epilog.sh /etc/slurm/epilog.d/50-gpuprof
# with Epilog=/etc/slurm/epilog.d/* in slurm.conf.
#
# Like the prolog: no PATH in slurmd's hook environment, and a non-zero exit
# drains the node, so the wrapper only execs gpuprof, which exits 0 always.
# A removed or half-installed binary must not drain the node either.
[ -x /usr/local/sbin/gpuprof ] || exit 0
exec /usr/local/sbin/gpuprof epilog --config /etc/gpuprof/gpuprof.toml
