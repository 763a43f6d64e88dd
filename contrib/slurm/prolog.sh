#!/bin/sh
# Slurm Prolog wrapper for gpuprof. Install as root, mode 0755, e.g.
#   install -m 0755 prolog.sh /etc/slurm/prolog.d/50-gpuprof
# with Prolog=/etc/slurm/prolog.d/* and PrologFlags=Alloc in slurm.conf.
#
# slurmd runs prologs with an environment built from scratch: there is no
# PATH, so every path here is absolute. A non-zero exit drains the node and
# requeues the job; `gpuprof prolog` exits 0 on its own failures and gives up
# after hooks.deadline, so this wrapper adds nothing that could fail.
# A removed or half-installed binary must not drain the node either.
[ -x /usr/local/sbin/gpuprof ] || exit 0
exec /usr/local/sbin/gpuprof prolog --config /etc/gpuprof/gpuprof.toml
