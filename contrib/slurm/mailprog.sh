#!/bin/sh
# Slurm MailProg wrapper for gpuprof. On the slurmctld host, in slurm.conf:
#   MailProg=/usr/lib/gpuprof/mailprog.sh
# (make install: /etc/slurm/gpuprof-mailprog.sh). Install as root, mode 0755.
#
# slurmctld runs MailProg as `MailProg -s SUBJECT RECIPIENT` with stdin
# /dev/null, an environment of its own making (SLURM_JOB_ID,
# SLURM_JOB_MAIL_TYPE, SLURM_JOB_STATE, ...) and a 120 s limit
# (src/slurmctld/agent.c, _mail_proc). This wrapper hands all of that to
# `gpuprof mailprog`, which sends the mail with the site's mailer
# (mail_prog.mailer in gpuprof.toml, default /usr/bin/mail, Slurm's own
# default) with exactly Slurm's arguments and body, and appends the job's
# GPU summary to the body of the mails that report a run when it finds it
# within mail_prog.deadline (5 s). Whatever goes wrong in gpuprof (no
# answer in time, no configuration, a panic), the mail goes out unchanged.
#
# When gpuprof is not installed or not executable, the mail goes straight
# to $mailer below, Slurm's default.
bin=${GPUPROF_BIN:-/usr/local/bin/gpuprof}
[ -n "${GPUPROF_BIN:-}" ] || [ -x "$bin" ] || bin=/usr/bin/gpuprof
conf=${GPUPROF_CONFIG:-/etc/gpuprof/gpuprof.toml}
mailer=${GPUPROF_MAILER:-/usr/bin/mail}

# 007: a log gpuprof creates is its group's to append to too, as the
# jobcomp wrapper's (the SlurmUser runs both).
umask 007
[ -x "$bin" ] || exec "$mailer" "$@"
exec "$bin" mailprog --config "$conf" -- "$@"
