#!/bin/sh
# The Slurm hook wrapper of gpuprof: one script, installed under three
# names, for slurmd's Prolog and Epilog and slurmctld's jobcomp/script.
# Install as root, mode 0755 (the package puts it in /usr/lib/gpuprof as
# prolog.sh, epilog.sh and jobcomp.sh), e.g.
#   install -m 0755 hook.sh /etc/slurm/prolog.d/50-gpuprof
#   install -m 0755 hook.sh /etc/slurm/epilog.d/50-gpuprof
#   install -m 0755 hook.sh /etc/slurm/gpuprof-jobcomp.sh
# with Prolog=/etc/slurm/prolog.d/*, PrologFlags=Alloc,
# Epilog=/etc/slurm/epilog.d/*, JobCompType=jobcomp/script and
# JobCompLoc=/etc/slurm/gpuprof-jobcomp.sh in slurm.conf. Slurm has one
# JobCompType: jobcomp/script replaces any other jobcomp plugin
# (jobcomp/elasticsearch, jobcomp/filetxt, ...).
#
# Which hook it is: slurmd says (SLURM_SCRIPT_CONTEXT=prolog_slurmd or
# epilog_slurmd), else the name it runs under (one with prolog, epilog or
# jobcomp in it), else slurmctld's jobcomp environment (JOBID).
#
# A failed prolog drains the node and requeues the job (held), a failed
# epilog drains the node; slurmctld runs jobcomp scripts one at a time and
# waits for each with no timeout, so a slow one stalls every later job
# record, and a failing one is logged for every job. So this wrapper exits
# 0 whatever happens to gpuprof: it runs it as a child (no exec), and a
# crash no Go code can catch (a segfault in SQLite or NVML, an OOM kill,
# SIGKILL) or a non-zero status is logged, not passed on. gpuprof gives up
# by itself after hooks.deadline (2 s) or jobcomp.deadline (1 s; typically
# a few ms); should it still run after limit seconds (stuck in the
# kernel), the wrapper kills it and returns without waiting for it to die.
# Keep limit above those deadlines.
#
# slurmd runs prologs and epilogs with an environment built from scratch:
# there is no PATH (slurmctld gives jobcomp PATH=/usr/bin:/bin:/usr/sbin:/sbin
# and the job's fields), so every path here is absolute, and the GPUPROF_
# variables below are only ever set by tests and by
# contrib/slurm/testcluster.sh. Nothing is written to stdout or stderr:
# gpuprof's own stderr (a crash's stack) and the wrapper's complaints go to
# /var/log/gpuprof/hooks.log (appended to without following a link, see
# append), the complaints to syslog too when it runs. No trap or
# wait either: the signal mask a daemon hands its scripts may block SIGCHLD
# and SIGALRM, and dash's wait never returns then; a pipe and foreground
# commands do.
case ${SLURM_SCRIPT_CONTEXT:-} in
prolog_slurmd) kind=prolog ;;
epilog_slurmd) kind=epilog ;;
*)
	case ${0##*/} in
	*prolog*) kind=prolog ;;
	*epilog*) kind=epilog ;;
	*jobcomp*) kind=jobcomp ;;
	*) kind= ;;
	esac
	;;
esac
[ -n "$kind" ] || [ -z "${JOBID:-}" ] || kind=jobcomp
if [ "$kind" = jobcomp ]; then
	job=${JOBID:-?} limit=${GPUPROF_HOOK_LIMIT:-3} spares="slurmctld goes on"
else
	job=${SLURM_JOB_ID:-?} limit=${GPUPROF_HOOK_LIMIT:-4} spares="the node is not drained"
fi
# make install puts gpuprof in /usr/local/bin, the Debian/RPM package in
# /usr/bin (on every user's PATH: the same binary is the users' command);
# a local install wins, as it does on PATH.
bin=${GPUPROF_BIN:-/usr/local/bin/gpuprof}
[ -n "${GPUPROF_BIN:-}" ] || [ -x "$bin" ] || bin=/usr/bin/gpuprof
conf=${GPUPROF_CONFIG:-/etc/gpuprof/gpuprof.toml}
log=${GPUPROF_HOOK_LOG:-/var/log/gpuprof/hooks.log}
# A removed or half-installed binary must not drain the node or stall
# slurmctld either.
[ -x "$bin" ] || exit 0
# gpuprof-hook, installed with gpuprof, takes the same arguments and
# leaves the same log lines at a fraction of the start-up: it forwards a
# prolog or epilog to the agent and hands anything else to gpuprof
# (docs/architecture.md, issue #41). It lies beside gpuprof (make build's bin/) or
# in PREFIX/lib/gpuprof for PREFIX/bin/gpuprof (make install's
# /usr/local/lib/gpuprof, the package's /usr/lib/gpuprof); without it,
# gpuprof runs the hook itself.
hook=${bin%/*}/gpuprof-hook
[ -x "$hook" ] || hook=${bin%/bin/gpuprof}/lib/gpuprof/gpuprof-hook
[ ! -x "$hook" ] || bin=$hook

# 007: a log this creates is its group's to write too — in the packaged
# /var/log/gpuprof (root:gpuprof, set-group-ID) root's hooks and the
# SlurmUser's jobcomp append to the same hooks.log. gpuprof sets the modes
# of its own files itself (docs/packaging.md).
umask 007
exec </dev/null >/dev/null 2>&1

# append TEXT: add TEXT to the log. Its directory, the packaged
# /var/log/gpuprof, is root:gpuprof 2770: the group's accounts (the gpuprof
# user, the SlurmUser) may plant a link or a FIFO as hooks.log, which the
# shell's >> would follow (root appending to, or creating, a file of their
# choosing) or block on for ever. GNU dd opens it O_NOFOLLOW|O_NONBLOCK
# instead: a link is refused, a FIFO never waits. A hard link to a file of
# root's is the kernel's to refuse (fs.protected_hardlinks, on by
# default). What cannot be written is lost, and syslog keeps the
# complaint; a failing dd is an ordinary command and ends nothing (a
# failed redirection on a special built-in such as ":" would end dash).
append() {
	[ -x /bin/dd ] || return 0
	printf '%s' "$1" | /bin/dd of="$log" oflag=append,nofollow,nonblock conv=notrunc status=none
}

# complain MESSAGE: one line in the log file, and in syslog when it runs.
complain() {
	msg="${kind:-hook} wrapper: job $job: $1; exiting 0 so $spares"
	append "$(/bin/date -u +%Y-%m-%dT%H:%M:%SZ) level=ERROR msg=\"$msg\"
"
	[ ! -S /dev/log ] || [ ! -x /usr/bin/logger ] || /usr/bin/logger -t gpuprof -p daemon.err -- "$msg"
}

[ -n "$kind" ] || {
	complain "neither a prolog, an epilog nor jobcomp (no SLURM_SCRIPT_CONTEXT, no JOBID, and the name ${0##*/} says none): gpuprof not run"
	exit 0
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
# gpuprof's stderr comes up the same pipe (a file would be opened with >>,
# see append), its first 200 lines kept for the log; the wrapper's own
# lines start with "@", as no line of gpuprof's does, and the status line
# follows an empty one, so that stderr without a final newline cannot
# swallow it.
child= timer= said= n=0
{
	(
		read -r me _ </proc/self/stat
		echo "@child $me"
		"$bin" "$kind" --config "$conf" 2>&1 >/dev/null
		s=$?
		echo
		echo "@status $s"
	) &
	if [ -x /bin/sleep ]; then
		(
			read -r me _ </proc/self/stat
			echo "@timer $me"
			/bin/sleep "$limit"
			echo @late
		) &
	fi
} | while IFS= read -r line; do
	case $line in
	"@child "*) child=${line#@child } ;;
	"@timer "*) timer=${line#@timer } ;;
	"@status "*)
		stop "$timer"
		[ -z "$said" ] || append "$said"
		[ "${line#@status }" = 0 ] || complain "$bin exited with status ${line#@status }"
		break
		;;
	@late)
		stop "$child"
		[ -z "$said" ] || append "$said"
		complain "$bin still running after ${limit}s: killed"
		break
		;;
	"") ;;
	*)
		n=$((n + 1))
		[ "$n" -gt 200 ] || said="$said$line
"
		;;
	esac
done
exit 0
