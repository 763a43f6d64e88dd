#!/bin/sh
# Slurm jobcomp/script wrapper for gpuprof. On the slurmctld host, in
# slurm.conf:
#   JobCompType=jobcomp/script
#   JobCompLoc=/etc/slurm/gpuprof-jobcomp.sh
# Install as root, mode 0755. Slurm has one JobCompType: this replaces any
# other jobcomp plugin (jobcomp/elasticsearch, jobcomp/filetxt, ...).
#
# slurmctld runs jobcomp scripts one at a time and waits for each with no
# timeout, so a slow script stalls every later job record, and a failing one
# is logged for every job. So this wrapper exits 0 whatever happens to
# gpuprof: it runs it as a child (no exec), and a crash no Go code can catch
# (a segfault in SQLite, an OOM kill, SIGKILL) or a non-zero status is
# logged, not passed on. gpuprof gives up by itself after jobcomp.deadline
# (1 s; typically a few ms, spooling what the database could not take in
# time); should it still run after limit seconds (stuck in the kernel), the
# wrapper kills it and returns without waiting for it to die. Keep limit
# above jobcomp.deadline.
#
# slurmctld builds the environment itself
# (PATH=/usr/bin:/bin:/usr/sbin:/sbin and the job's fields); paths here are
# absolute all the same, and the variables below are only ever set by tests
# and by contrib/slurm/testcluster.sh. Nothing is written to stdout or
# stderr: gpuprof's own stderr (a crash's stack) and the wrapper's
# complaints go to /var/log/gpuprof/hooks.log, else
# /var/lib/gpuprof/spool/hooks.log, and to syslog when it runs. No trap or
# wait either: the signal mask a daemon hands its scripts may block SIGCHLD
# and SIGALRM, and dash's wait never returns then; a pipe and foreground
# commands do.
# make install puts gpuprof in /usr/local/sbin, the Debian/RPM package in
# /usr/sbin; a local install wins, as it does on PATH.
bin=${GPUPROF_BIN:-/usr/local/sbin/gpuprof}
[ -n "${GPUPROF_BIN:-}" ] || [ -x "$bin" ] || bin=/usr/sbin/gpuprof
conf=${GPUPROF_CONFIG:-/etc/gpuprof/gpuprof.toml}
limit=${GPUPROF_HOOK_LIMIT:-3}
log=${GPUPROF_HOOK_LOG:-/var/log/gpuprof/hooks.log}
# A removed or half-installed binary must not stall or fail slurmctld either.
[ -x "$bin" ] || exit 0

# 007: a log this creates is its group's to write too — in the packaged
# /var/log/gpuprof (root:gpuprof, set-group-ID) root's hooks and the
# SlurmUser's jobcomp append to the same hooks.log. gpuprof sets the modes
# of its own files itself (docs/packaging.md).
umask 007
exec </dev/null >/dev/null 2>&1
[ -d "${log%/*}" ] || log=/var/lib/gpuprof/spool/hooks.log
# "true", not ":": a redirection that fails on a special built-in such as
# ":" ends a POSIX shell (dash exits 2), which would fail the hook itself.
{ true >>"$log"; } 2>/dev/null || log=/dev/null

# complain MESSAGE: one line in the log file, and in syslog when it runs.
complain() {
	msg="jobcomp wrapper: job ${JOBID:-?}: $1; exiting 0 so slurmctld goes on"
	[ "$log" = /dev/null ] || printf '%s level=ERROR msg="%s"\n' "$(/bin/date -u +%Y-%m-%dT%H:%M:%SZ)" "$msg" >>"$log"
	[ ! -S /dev/log ] || [ ! -x /usr/bin/logger ] || /usr/bin/logger -t gpuprof -p daemon.err -- "$msg"
}

# stop PID: SIGKILL a subshell below and its children (so no sleep or
# gpuprof outlives the one that lost the race).
stop() {
	[ -n "$1" ] || return 0
	kids=
	read -r kids <"/proc/$1/task/$1/children" 2>/dev/null
	kill -s KILL $kids "$1" 2>/dev/null
}

# Two subshells race: one runs gpuprof and says how it ended, the other
# sleeps limit seconds and says "late"; the first line decides. Each says
# its pid first (from /proc/self/stat: no extra exec on the hook's path).
child= timer=
{
	(
		read -r me _ </proc/self/stat
		echo "child $me"
		"$bin" jobcomp --config "$conf" >/dev/null 2>>"$log"
		echo "status $?"
	) &
	if [ -x /bin/sleep ]; then
		(
			read -r me _ </proc/self/stat
			echo "timer $me"
			/bin/sleep "$limit"
			echo late
		) &
	fi
} | while read -r what value; do
	case $what in
	child) child=$value ;;
	timer) timer=$value ;;
	status)
		stop "$timer"
		[ "$value" = 0 ] || complain "$bin exited with status $value"
		break
		;;
	late)
		stop "$child"
		complain "$bin still running after ${limit}s: killed"
		break
		;;
	esac
done
exit 0
