#!/bin/sh
# Slurm Prolog wrapper for gpuprof. Install as root, mode 0755, e.g.
#   install -m 0755 prolog.sh /etc/slurm/prolog.d/50-gpuprof
# with Prolog=/etc/slurm/prolog.d/* and PrologFlags=Alloc in slurm.conf.
#
# A non-zero exit drains the node and requeues the job (held), so this
# wrapper exits 0 whatever happens to gpuprof: it runs it as a child (no
# exec), and a crash no Go code can catch (a segfault in SQLite or NVML, an
# OOM kill, SIGKILL) or a non-zero status is logged, not passed on. gpuprof
# gives up by itself after hooks.deadline (2 s); should it still run after
# limit seconds (stuck in the kernel), the wrapper kills it and returns
# without waiting for it to die. Keep limit above hooks.deadline.
#
# slurmd runs prologs with an environment built from scratch: there is no
# PATH, so every path here is absolute, and the variables below are only
# ever set by tests and by contrib/slurm/testcluster.sh. Nothing is written
# to stdout or stderr: gpuprof's own stderr (a crash's stack) and the
# wrapper's complaints go to /var/log/gpuprof/hooks.log, else
# /var/lib/gpuprof/spool/hooks.log, and to syslog when it runs. No trap or
# wait either: the signal mask a daemon hands its scripts may block SIGCHLD
# and SIGALRM, and dash's wait never returns then; a pipe and foreground
# commands do.
# make install puts gpuprof in /usr/local/sbin, the Debian/RPM package in
# /usr/sbin; a local install wins, as it does on PATH.
bin=${GPUPROF_BIN:-/usr/local/sbin/gpuprof}
[ -n "${GPUPROF_BIN:-}" ] || [ -x "$bin" ] || bin=/usr/sbin/gpuprof
conf=${GPUPROF_CONFIG:-/etc/gpuprof/gpuprof.toml}
limit=${GPUPROF_HOOK_LIMIT:-4}
log=${GPUPROF_HOOK_LOG:-/var/log/gpuprof/hooks.log}
# A removed or half-installed binary must not drain the node either.
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
	msg="prolog wrapper: job ${SLURM_JOB_ID:-?}: $1; exiting 0 so the node is not drained"
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
		"$bin" prolog --config "$conf" >/dev/null 2>>"$log"
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
