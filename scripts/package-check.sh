#!/usr/bin/env bash
# make package-check: the Debian package checked as a site would meet it,
# on this machine (root, Debian 12): lintian finds no error; dpkg -i
# installs it; every path the README's package block, its agent command
# and the example slurm.conf name is installed; systemd-analyze verifies
# the installed units; the man pages render in their sections; the bash
# completion loads and completes a subcommand; the maintainer scripts made
# /var/lib/gpuprof and /var/log/gpuprof with mode 2770; a new user with a
# login shell runs gpuprof jobs, show and tui (in tmux) from their PATH,
# through the agent's query socket; dpkg -r leaves the database in place,
# and purge removes the conffiles but keeps it. Run after make test (CI does): it installs into
# the real /usr and /etc, which no test may see while it runs. Refuses to
# run where gpuprof is installed or configured already.
set -euo pipefail
cd "$(dirname "$0")/.."
fail() { echo "package-check: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || fail "needs root (dpkg -i)"
[ -r /usr/share/bash-completion/bash_completion ] || fail "bash-completion not installed"
for t in lintian dpkg systemd-analyze man bash sqlite3 setpriv tmux useradd userdel su; do command -v "$t" >/dev/null || fail "$t not installed"; done
checkuser=gpuprofcheck # the new user of "a user's gpuprof jobs, show and tui"
if dpkg -s gpuprof >/dev/null 2>&1 || [ -e /etc/gpuprof ] || [ -e /var/lib/gpuprof/gpuprof.db ] ||
	[ -e /run/gpuprof/query.sock ] || getent passwd "$checkuser" >/dev/null; then
	fail "gpuprof is installed or configured on this machine already; run this on a clean one"
fi

make package
deb=$(ls dist/gpuprof_*_amd64.deb)
rpm=$(ls dist/gpuprof-*.x86_64.rpm)
[ -s "$rpm" ] || fail "no .rpm"

echo "== lintian $deb"
lintian --tag-display-limit 0 "$deb" | tee /tmp/gpuprof-lintian.txt || true
! grep -q '^E:' /tmp/gpuprof-lintian.txt || fail "lintian reports errors"

agent=
# /run/gpuprof may be left by the tests (empty); what the agent below
# makes in it goes again, and the directory too when it was not there.
[ -e /run/gpuprof ] && runpre=1 || runpre=
cleanrun() {
	if [ -n "$runpre" ]; then
		rm -rf /run/gpuprof/query.sock /run/gpuprof/agent.sock /run/gpuprof/sim
	else
		rm -rf /run/gpuprof
	fi
}
cleanup() {
	[ -z "$agent" ] || kill "$agent" 2>/dev/null || true
	if getent passwd "$checkuser" >/dev/null; then
		su - "$checkuser" -c 'tmux -S "$HOME/tmux.sock" kill-server' >/dev/null 2>&1 || true
		userdel -r "$checkuser" >/dev/null 2>&1 || true
	fi
	cleanrun
	dpkg --purge gpuprof >/dev/null 2>&1 || true
	rm -f /var/lib/gpuprof/gpuprof.db
}
trap cleanup EXIT

echo "== dpkg -i"
dpkg -i "$deb"
[ -x /usr/bin/gpuprof ] || fail "no /usr/bin/gpuprof"
[ ! -e /usr/sbin/gpuprof ] || fail "/usr/sbin/gpuprof installed too"
getent passwd gpuprof >/dev/null || fail "no gpuprof user"
for d in /var/lib/gpuprof /var/lib/gpuprof/spool /var/log/gpuprof; do
	[ "$(stat -c %a:%U:%G "$d")" = 2770:root:gpuprof ] || fail "$d is $(stat -c %a:%U:%G "$d"), want 2770:root:gpuprof"
done
if getent passwd slurm >/dev/null; then # Debian's slurm packages' SlurmUser
	id -nG slurm | tr ' ' '\n' | grep -qx gpuprof || fail "the SlurmUser slurm is not in the group gpuprof"
fi
grep -qx /etc/gpuprof/gpuprof.toml /var/lib/dpkg/info/gpuprof.conffiles || fail "gpuprof.toml is not a conffile"

echo "== the paths the README and the example slurm.conf name"
# The README's package block (the same lines as the example slurm.conf:
# e2e TestExampleSlurmConfIsREADMEBlock) and its agent command, as an
# admin copies them; comments left out. Prolog=, Epilog= and JobCompLoc=
# must be programs slurmd and slurmctld can run.
example=/usr/share/doc/gpuprof/examples/slurm.conf
[ -r "$example" ] || fail "no $example"
block() { awk -v want="$1" 'BEGIN { RS = "```" } index($0, want) { print; exit }' README.md; }
paths() { sed 's/#.*//' | grep -oE '(^|[[:space:]=])/[^[:space:]<>&]+' | sed 's/^[[:space:]=]//' | grep -v '^/dev/' || true; }
named=$( { block 'Prolog=/usr/lib/gpuprof/'; block 'gpuprof agent --config'; cat "$example"; } | paths | sort -u)
[ -n "$named" ] || fail "README.md and $example name no paths"
for p in $named; do
	[ -e "$p" ] || fail "$p (named by README.md or $example) is not installed"
done
for key in Prolog Epilog JobCompLoc; do
	p=$(sed -n "s/^$key=\([^[:space:]#]*\).*/\1/p" "$example")
	[ -n "$p" ] && [ -x "$p" ] || fail "$example: $key=$p is not an installed program"
done
grep -q '^JobCompType=jobcomp/script' "$example" || fail "$example sets no JobCompType=jobcomp/script"

echo "== systemd-analyze verify"
# verify also checks that ExecStart's binary exists and the units parse.
systemd-analyze verify /lib/systemd/system/gpuprof-agent.service /lib/systemd/system/gpuprof-serve.service \
	/lib/systemd/system/gpuprof-import.service /lib/systemd/system/gpuprof-import.timer 2>&1 | tee /tmp/gpuprof-verify.txt
! grep -i 'gpuprof' /tmp/gpuprof-verify.txt || fail "systemd-analyze verify complains about gpuprof's units"
# The sandbox of the two services that need no device: exposure at most
# 4.0 (docs/packaging.md has today's figures).
for u in gpuprof-import gpuprof-serve; do
	line=$(systemd-analyze security --offline=yes --no-pager /lib/systemd/system/$u.service 2>/dev/null | tail -1)
	echo "$line"
	level=$(sed -n 's/.*exposure level for [^:]*: \([0-9.]*\).*/\1/p' <<<"$line")
	[ -n "$level" ] && awk -v l="$level" 'BEGIN { exit !(l <= 4.0) }' || fail "$u exposure '$level', want at most 4.0"
done

echo "== man 1 gpuprof-show, man 8 gpuprof-agent"
# Users' commands in section 1, daemons and hooks in 8.
man -P cat 1 gpuprof-show 2>/dev/null | grep -q 'gpuprof show JOBID' || fail "man 1 gpuprof-show does not render"
man -P cat 8 gpuprof-agent 2>/dev/null | grep -q 'gpuprof agent' || fail "man 8 gpuprof-agent does not render"

echo "== bash completion"
got=$(bash -c 'source /usr/share/bash-completion/bash_completion
source /usr/share/bash-completion/completions/gpuprof
COMP_WORDS=(gpuprof sho); COMP_CWORD=1; COMP_LINE="gpuprof sho"; COMP_POINT=${#COMP_LINE}
__start_gpuprof gpuprof sho gpuprof 2>/dev/null; printf "%s\n" "${COMPREPLY[@]}"')
grep -qx 'show' <<<"$got" || fail "bash completion of 'gpuprof sho' gave: $got"

echo "== the hooks as slurmd runs them"
# The packaged wrapper finds /usr/bin/gpuprof and exits 0 with slurmd's
# bare environment (no job: gpuprof logs why and does nothing).
env -i /usr/lib/gpuprof/prolog.sh || fail "the prolog wrapper exited $?"
# The wrappers run the thin hook, installed with /usr/bin/gpuprof, which
# hands what the agent does not take (jobcomp: the records below) to
# gpuprof-hook-full.
[ -x /usr/lib/gpuprof/gpuprof-hook ] || fail "/usr/lib/gpuprof/gpuprof-hook not installed"
[ -x /usr/lib/gpuprof/gpuprof-hook-full ] || fail "/usr/lib/gpuprof/gpuprof-hook-full not installed"
env -i /usr/lib/gpuprof/gpuprof-hook-full epilog || fail "gpuprof-hook-full epilog exited $?"
env -i /usr/lib/gpuprof/gpuprof-hook epilog || fail "gpuprof-hook epilog exited $?"

echo "== root, the SlurmUser and gpuprof all spool, and gpuprof ingests"
# jobcomp as root (the agent and the hooks are root), as slurm (slurmctld
# runs jobcomp as its SlurmUser), as gpuprof (serve and import run as that
# user): one job each. jobcomp only spools (the database has one writer);
# gpuprof ingest as gpuprof, the writer of a host where neither the agent
# nor serve runs, must read and remove all three records. The wrapper
# exits 0 whatever happens, so the database says whether each landed.
jobcomp_as() { # USER JOBID [JOB'S UID JOB'S USER]
	env -i PATH=/usr/bin:/bin:/usr/sbin:/sbin JOBID="$2" ARRAYJOBID=0 ARRAYTASKID=4294967294 UID="${3:-1000}" GID=1000 \
		USERNAME="${4:-alice}" GROUPNAME=users JOBNAME=train JOBSTATE=COMPLETED PARTITION=gpu QOS=normal ACCOUNT=lab \
		CLUSTER=pkgcheck NODES=gpu01 NODECNT=1 PROCS=8 SUBMIT=1700000000 START=1700000600 END=1700004200 \
		LIMIT=1-00:00:00 EXITCODE=0:0 DERIVED_EC=0:0 BATCH=yes WORK_DIR=/tmp \
		setpriv --reuid="$1" --regid="$(id -g "$1")" --init-groups /usr/lib/gpuprof/jobcomp.sh
}
jobcomp_as root 91
getent passwd slurm >/dev/null && jobcomp_as slurm 92
jobcomp_as gpuprof 93
setpriv --reuid=gpuprof --regid="$(id -g gpuprof)" --init-groups /usr/bin/gpuprof ingest --config /etc/gpuprof/gpuprof.toml >/dev/null ||
	fail "gpuprof ingest as gpuprof exited $?"
want="91 93"
getent passwd slurm >/dev/null && want="91 92 93"
got=$(sqlite3 /var/lib/gpuprof/gpuprof.db "select group_concat(job_id, ' ') from (select job_id from sched_jobs where cluster = 'pkgcheck' order by job_id)")
[ "$got" = "$want" ] || fail "jobs written by root, slurm, gpuprof: '$got', want '$want' (see /var/log/gpuprof/hooks.log)"
for f in /var/lib/gpuprof/gpuprof.db /var/lib/gpuprof/gpuprof.db-wal /var/lib/gpuprof/gpuprof.db-shm; do
	[ ! -e "$f" ] || [ "$(stat -c %a:%G "$f")" = 660:gpuprof ] || fail "$f is $(stat -c %a:%G "$f"), want 660:gpuprof"
done
sqlite3 /var/lib/gpuprof/gpuprof.db "delete from sched_jobs where cluster = 'pkgcheck'; delete from sched_events where cluster = 'pkgcheck'"

echo "== a user's gpuprof jobs, show and tui (login shell, tmux)"
# A new user with a login shell, not in the group gpuprof: the command is
# on their PATH, and they read their own job through the agent's query
# socket (the database is root's and the group's). The agent runs on the
# simulated GPU node: this machine has no GPU.
useradd -m -s /bin/bash "$checkuser"
jobcomp_as root 94 "$(id -u "$checkuser")" "$checkuser"
/usr/bin/gpuprof ingest --config /etc/gpuprof/gpuprof.toml >/dev/null || fail "gpuprof ingest exited $?"
/usr/bin/gpuprof agent --gpu sim --config /etc/gpuprof/gpuprof.toml </dev/null >/tmp/gpuprof-agent.out 2>&1 &
agent=$!
for _ in $(seq 100); do [ -S /run/gpuprof/query.sock ] && break; sleep 0.1; done
[ -S /run/gpuprof/query.sock ] || fail "the agent made no query socket: $(cat /tmp/gpuprof-agent.out)"
as_user() { su - "$checkuser" -c "$1"; }
[ "$(as_user 'command -v gpuprof')" = /usr/bin/gpuprof ] || fail "gpuprof is not on $checkuser's login PATH ($(as_user 'echo $PATH'))"
out=$(as_user 'gpuprof jobs') || fail "gpuprof jobs as $checkuser exited $?: $out"
echo "$out"
# The default table cuts a user name to 7 cells.
grep -qE "^94 +train +${checkuser:0:6}" <<<"$out" || fail "gpuprof jobs as $checkuser does not list job 94"
[ "$(grep -cE '^[0-9]' <<<"$out")" = 1 ] || fail "gpuprof jobs as $checkuser lists more than their one job"
out=$(as_user 'gpuprof show 94') || fail "gpuprof show 94 as $checkuser exited $?: $out"
grep -q '^Job 94 ' <<<"$out" || fail "gpuprof show 94 as $checkuser: $out"
as_user 'tmux -S "$HOME/tmux.sock" new-session -d -x 160 -y 40 "gpuprof tui"' || fail "tmux as $checkuser"
screen=
for _ in $(seq 100); do
	screen=$(as_user 'tmux -S "$HOME/tmux.sock" capture-pane -p') || true
	grep -qE "jobs of $checkuser" <<<"$screen" && grep -qE '94 +train' <<<"$screen" && break
	sleep 0.1
done
echo "$screen" | sed -n 1,4p
grep -qE '94 +train' <<<"$screen" || fail "gpuprof tui as $checkuser does not show job 94: $screen"
as_user 'tmux -S "$HOME/tmux.sock" send-keys q'
for _ in $(seq 50); do as_user 'tmux -S "$HOME/tmux.sock" has-session' 2>/dev/null || break; sleep 0.1; done
! as_user 'tmux -S "$HOME/tmux.sock" has-session' 2>/dev/null || fail "gpuprof tui did not end on q"
kill "$agent"
wait "$agent" 2>/dev/null || true
agent=
userdel -r "$checkuser" 2>/dev/null || userdel "$checkuser"
cleanrun

sqlite3 /var/lib/gpuprof/gpuprof.db "delete from sched_jobs where cluster = 'pkgcheck'; delete from sched_events where cluster = 'pkgcheck'"

echo "== dpkg -r keeps the database"
sqlite3 /var/lib/gpuprof/gpuprof.db 'create table keep(x); insert into keep values (42);'
dpkg -r gpuprof
[ ! -e /usr/bin/gpuprof ] || fail "dpkg -r left the binary"
[ "$(sqlite3 /var/lib/gpuprof/gpuprof.db 'select x from keep')" = 42 ] || fail "dpkg -r lost the database"
dpkg --purge gpuprof
[ ! -e /etc/gpuprof/gpuprof.toml ] || fail "purge left the conffile"
[ -e /var/lib/gpuprof/gpuprof.db ] || fail "purge removed the database"
echo "package-check: ok ($deb, $rpm)"
