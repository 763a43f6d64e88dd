#!/bin/bash
# testcluster.sh — a real single-node Slurm with fake GPUs, for gpuprof's
# end-to-end tests, CI and demos.
#
#   testcluster.sh start DIR [--accounting] [--jobcomp] [--configless] [--mailprog] [--by-partition]
#                                             start (or keep) a cluster in DIR
#   testcluster.sh stop DIR                   stop what start started; DIR stays
#   testcluster.sh status DIR                 exit 0 when the node is usable
#   testcluster.sh munge DIR                  only make sure munged answers
#   testcluster.sh hooks DIR PARTITION        gpuprof hooks for one partition
#                                             of a --by-partition cluster
#
# --accounting adds slurmdbd and MariaDB (sacct works); --jobcomp makes
# slurmctld run DIR/hooks/jobcomp as its jobcomp/script (JobCompLoc);
# --mailprog makes it send job mail through DIR/hooks/mailprog (MailProg=,
# contrib/slurm/mailprog.sh) instead of /bin/true.
# --by-partition makes the Prolog, Epilog and jobcomp hand each job to the
# hooks of its partition, DIR/hooks/p/PARTITION/<ctx> (written by `hooks`,
# around GPUPROF_BIN and GPUPROF_CONFIG, logging to its own hooks.log), and
# do nothing for a partition without any: one cluster shared by tests that
# each record into their own gpuprof (e2e's shared cluster).
# --configless runs the node as a configless one: slurmctld serves its
# files (SlurmctldParameters=enable_configless) and slurmd, started with
# --conf-server and no slurm.conf, keeps the copy it fetched in
# SlurmdSpoolDir/conf-cache (DIR/spool/slurmd/conf-cache) and hands its
# hooks SLURM_CONF there.
# gpuprof's slurm.conf lines are the package's own example's
# (slurm.conf.example), its /usr/lib/gpuprof wrappers here DIR/hooks.
#
# Exit status: 0 done, 1 failed, 2 usage, 3 Slurm missing and not
# installable (no apt-get, or apt-get failed).
#
# Everything the cluster writes (configuration, state, spool, logs, pid
# files, the MariaDB data directory) lives under DIR, so several clusters can
# run side by side and a test removes all traces by removing DIR. The node has
# four GPUs (TESTCLUSTER_GPUS) whose device files are character devices
# DIR/dev/nvidia[0-3] (major 195 like NVIDIA's), so Slurm hands jobs
# CUDA_VISIBLE_DEVICES and SLURM_JOB_GPUS exactly as on a GPU node.
#
# start prints one line on stdout, SLURM_CONF=DIR/etc/slurm.conf, for callers
# to eval and export; progress and errors go to stderr. It must run as root
# (Slurm daemons, mknod, munge) and needs no systemd.
#
# Environment:
#   GPUPROF_BIN      gpuprof binary the Prolog/Epilog (and, with --jobcomp,
#                    jobcomp) wrappers run: contrib/slurm's own, logging to
#                    DIR/hooks/hooks.log; unset: the wrappers do nothing and
#                    exit 0.
#   GPUPROF_CONFIG   --config passed to it (unset: /etc/gpuprof/gpuprof.toml,
#                    as the installed wrappers pass).
#   TESTCLUSTER_CPUS CPUs the node advertises (default: max(16, nproc)); jobs
#                    in tests sleep rather than compute, so more slots than
#                    cores lets them run concurrently.
#   TESTCLUSTER_GPUS GPUs of the node (default 4, 1–32), each with 8 shards:
#                    the same workload on another node size (the what-if's
#                    counterfactual test).
#   TESTCLUSTER_HOOK_ENV=1  the wrappers also save their environment to
#                    DIR/hooks/env/<prolog|epilog|jobcomp>.<jobid> (debugging).
#
# munged is the host's one munge daemon (default socket): start launches it
# when it is not running and stop leaves it running, because other clusters
# and the host's own Slurm may rely on it.
set -euo pipefail

readonly CLUSTER=gpuproftest
NGPU=${TESTCLUSTER_GPUS:-4}
[[ $NGPU =~ ^[0-9]+$ ]] && ((NGPU >= 1 && NGPU <= 32)) || {
	printf 'testcluster: error: TESTCLUSTER_GPUS=%s: want 1 to 32\n' "$NGPU" >&2
	exit 2
}
readonly NGPU
readonly NSHARD=$((8 * NGPU)) # 8 per GPU: Slurm splits a File-less shard count evenly
readonly WAIT_S=60

log() { printf 'testcluster: %s\n' "$*" >&2; }
die() {
	log "error: $*"
	exit 1
}

# Exit status 3 means "Slurm is not installed and cannot be": test harnesses
# skip on it (outside CI) instead of failing.
readonly EXIT_NO_SLURM=3
die_no_slurm() {
	log "error: $*"
	exit "$EXIT_NO_SLURM"
}

usage() {
	sed -n '2,/^# Exit status/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2
	exit 2
}

[[ $# -ge 2 ]] || usage
cmd=$1
dir=$(realpath -m -- "$2")
shift 2
accounting=0
jobcomp=0
configless=0
mailprog=0
bypart=0
part=
for a in "$@"; do
	case $a in
	--accounting) accounting=1 ;;
	--jobcomp) jobcomp=1 ;;
	--configless) configless=1 ;;
	--mailprog) mailprog=1 ;;
	--by-partition) bypart=1 ;;
	*) [[ $cmd == hooks && -z $part ]] || usage
		part=$a ;;
	esac
done

conf=$dir/etc/slurm.conf
export SLURM_CONF=$conf
# The Slurm commands read SLURM_CONF; a stale SLURM_CONFIG_DIR or server
# variables of the caller must not redirect them to another cluster.
unset SLURM_CONFIG_DIR SLURM_CLUSTERS

# ---------------------------------------------------------------- helpers

# alive PIDFILE NAME: the pid in PIDFILE runs a program called NAME. The name
# check guards against a pid reused after a crash.
alive() {
	local pid
	# The daemon may remove its pid file between the test and the read.
	pid=$(cat -- "$1" 2>/dev/null) || return 1
	[[ $pid =~ ^[0-9]+$ ]] || return 1
	[[ -r /proc/$pid/comm ]] || return 1
	[[ $(<"/proc/$pid/comm") == "$2"* ]] || return 1
	# A daemon that exited under an init that does not reap (containers)
	# stays a zombie with its name.
	local stat
	stat=$(cat -- "/proc/$pid/stat" 2>/dev/null) || return 1
	stat=${stat##*) }
	[[ ${stat%% *} != Z ]]
}

# stop_pidfile PIDFILE NAME: SIGTERM, wait up to 15 s, then SIGKILL.
stop_pidfile() {
	local pid i
	alive "$1" "$2" || return 0
	pid=$(<"$1")
	kill -TERM "$pid" 2>/dev/null || return 0
	for ((i = 0; i < 150; i++)); do
		alive "$1" "$2" || return 0
		sleep 0.1
	done
	log "$2 (pid $pid) ignored SIGTERM; killing it"
	kill -KILL "$pid" 2>/dev/null || true
}

port_free() { [[ -z $(ss -Htln "sport = :$1" 2>/dev/null) ]]; }

# wait_for SECONDS DESCRIPTION COMMAND...: poll until COMMAND succeeds.
wait_for() {
	local secs=$1 what=$2 i
	shift 2
	for ((i = 0; i < secs * 5; i++)); do
		if "$@" >/dev/null 2>&1; then
			return 0
		fi
		sleep 0.2
	done
	log "timed out after ${secs}s waiting for $what"
	return 1
}

show_logs() {
	local f
	for f in "$dir"/log/*.log; do
		[[ -f $f ]] || continue
		printf '==== %s (last 40 lines)\n' "$f" >&2
		tail -n 40 "$f" >&2
	done
}

# ---------------------------------------------------------------- packages

# need_pkgs installs the Debian packages behind the given commands when a
# command is missing. apt-get update runs only when a package is unknown to
# the current lists, which keeps a warm machine fast. Clusters started side
# by side on a fresh machine install one at a time (apt holds dpkg's lock:
# a second apt-get would fail), each looking again once it holds the lock.
need_pkgs() {
	local -a missing=()
	local pair
	missing_pkgs() {
		missing=()
		for pair in "$@"; do
			command -v "${pair%%:*}" >/dev/null 2>&1 || missing+=("${pair#*:}")
		done
	}
	missing_pkgs "$@"
	((${#missing[@]})) || return 0
	exec 7>>/run/lock/gpuprof-testcluster.install
	flock -w 900 7 || die "waited 15 minutes for another testcluster.sh's apt-get"
	missing_pkgs "$@"
	if ((${#missing[@]} == 0)); then
		exec 7>&-
		return 0
	fi
	command -v apt-get >/dev/null 2>&1 || die_no_slurm "missing ${missing[*]} and no apt-get to install them"
	mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)
	log "installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	local -a apt=(apt-get -y -q --no-install-recommends -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold install)
	if ! "${apt[@]}" "${missing[@]}" >"$dir/log/apt.log" 2>&1; then
		log "apt-get install failed; updating package lists and retrying"
		apt-get -q update >>"$dir/log/apt.log" 2>&1 || true
		"${apt[@]}" "${missing[@]}" >>"$dir/log/apt.log" 2>&1 ||
			{
				tail -n 20 "$dir/log/apt.log" >&2
				die_no_slurm "cannot install ${missing[*]} (see $dir/log/apt.log)"
			}
	fi
	exec 7>&-
}

# ---------------------------------------------------------------- munge

munge_ok() { munge -n 2>/dev/null | unmunge >/dev/null 2>&1; }

# close_fds runs a command with no open file but stdin, stdout and stderr.
# munged outlives this script (stop leaves it running): a file it inherited
# would stay open as long as it runs — the lock of a caller's `flock
# /tmp/LOCK go test …`, held then by munged for good, so that every later
# flock on it waits forever (seen 2026-12-06).
close_fds() {
	(
		for fd in /proc/$BASHPID/fd/*; do
			fd=${fd##*/}
			((fd > 2)) && eval "exec $fd>&-" 2>/dev/null
		done
		exec "$@"
	)
}

start_munge() {
	munge_ok && return 0
	if [[ ! -s /etc/munge/munge.key ]]; then
		log "creating /etc/munge/munge.key"
		mkdir -p /etc/munge
		mungekey --create --keyfile=/etc/munge/munge.key
	fi
	mkdir -p /run/munge /var/log/munge /var/lib/munge
	chown munge:munge /etc/munge /etc/munge/munge.key /run/munge /var/log/munge /var/lib/munge
	chmod 0700 /etc/munge
	chmod 0400 /etc/munge/munge.key
	chmod 0755 /run/munge
	log "starting munged"
	if ! close_fds runuser -u munge -- /usr/sbin/munged; then
		# Another caller (a test running in parallel) may have started it
		# first: then it answers shortly.
		wait_for 10 munged munge_ok || die "munged did not start (see /var/log/munge/munged.log)"
		return 0
	fi
	wait_for 10 munged munge_ok || die "munged does not answer"
}

# ---------------------------------------------------------------- config

# pick_ports sets ctld_port (slurmctld), slurmd_port, dbd_port and db_port
# (MariaDB): the ones DIR already uses, else the first free block of four
# from 16817 on, so a system Slurm (6817-6819) and other test clusters keep
# theirs.
#
# A block free now is bound seconds later, when the daemons start: two
# clusters starting side by side (parallel tests) would both take it, the
# second's daemons would fail to bind, and its sinfo would answer from the
# first's slurmctld. So the choice is made under a host-wide lock and
# written to port_claims (block, DIR, time); a block another DIR claimed
# less than claim_ttl seconds ago is skipped, long enough for its daemons
# to hold their ports.
port_claims=/run/lock/gpuprof-testcluster.ports
claim_ttl=300

pick_ports() {
	local base="" now
	mkdir -p /run/lock
	exec 8>>"$port_claims.lock"
	flock 8
	touch "$port_claims"
	now=$(date +%s)
	if [[ -f $conf ]]; then
		base=$(sed -n 's/^SlurmctldPort=\([0-9]*\)$/\1/p' "$conf")
	fi
	if [[ -z $base ]] || claimed_by_other "$base" "$now" || ! { running_ctld || ports_free "$base"; }; then
		for ((base = 16817; base < 17817; base += 10)); do
			! claimed_by_other "$base" "$now" && ports_free "$base" && break
		done
		((base < 17817)) || die "no free ports in 16817-17816"
	fi
	# Keep the other clusters' live claims, and this one's anew.
	awk -v d="$dir" -v now="$now" -v ttl="$claim_ttl" '$2 != d && now - $3 < ttl' "$port_claims" >"$port_claims.tmp"
	printf '%s %s %s\n' "$base" "$dir" "$now" >>"$port_claims.tmp"
	mv -f "$port_claims.tmp" "$port_claims"
	flock -u 8
	exec 8>&-
	ctld_port=$base
	slurmd_port=$((base + 1))
	dbd_port=$((base + 2))
	db_port=$((base + 3))
}

# claimed_by_other BASE NOW: another DIR claimed the block at BASE less
# than claim_ttl seconds before NOW.
claimed_by_other() {
	local b d t
	while read -r b d t; do
		[[ $b == "$1" && $d != "$dir" ]] && (($2 - t < claim_ttl)) && return 0
	done <"$port_claims"
	return 1
}

ports_free() {
	local p
	for p in "$1" $(($1 + 1)) $(($1 + 2)) $(($1 + 3)); do
		port_free "$p" || return 1
	done
}

running_ctld() { alive "$dir/run/slurmctld.pid" slurmctld; }

make_devices() {
	local i dev
	mkdir -p "$dir/dev"
	for ((i = 0; i < NGPU; i++)); do
		dev=$dir/dev/nvidia$i
		if [[ ! -c $dev ]] || [[ $(stat -c '%t:%T' "$dev") != "c3:$(printf '%x' "$i")" ]]; then
			rm -f "$dev"
			mknod -m 0666 "$dev" c 195 "$i"
		fi
	done
}

# write_if_changed FILE MODE: stdin becomes FILE when it differs; returns 0
# when FILE changed.
write_if_changed() {
	local tmp
	tmp=$(mktemp "$1.XXXXXX")
	cat >"$tmp"
	chmod "$2" "$tmp"
	if [[ -f $1 ]] && cmp -s "$tmp" "$1"; then
		rm -f "$tmp"
		return 1
	fi
	mv -f "$tmp" "$1"
}

# write_hooks writes the Prolog, Epilog and jobcomp wrappers: the
# production ones (contrib/slurm/<ctx>.sh, beside this script) run on
# $GPUPROF_BIN with $GPUPROF_CONFIG, logging to DIR/hooks/hooks.log, so the
# test cluster exercises exactly what an admin installs. slurmd names the
# job SLURM_JOB_ID, jobcomp/script names it JOBID. With --by-partition they
# hand the job to its partition's wrappers instead (write_partition_hooks).
write_hooks() {
	local ctx f idvar partvar
	mkdir -p "$dir/hooks/env" "$dir/hooks/p"
	for ctx in prolog epilog jobcomp mailprog; do
		f=$dir/hooks/$ctx
		idvar=SLURM_JOB_ID partvar=SLURM_JOB_PARTITION
		[[ $ctx != jobcomp ]] || idvar=JOBID partvar=PARTITION
		{
			printf '#!/bin/sh\n'
			printf '# Generated by testcluster.sh; rewritten on every start.\n'
			if [[ ${TESTCLUSTER_HOOK_ENV:-0} == 1 ]]; then
				# Written aside and renamed, so a reader never sees half a file.
				printf 'f=%q/%s.${%s:-none}\n' "$dir/hooks/env" "$ctx" "$idvar"
				printf '/usr/bin/env >"$f.tmp" && /bin/mv -f "$f.tmp" "$f"\n'
			fi
			if ((bypart)); then
				# A partition name is one path component, never "." or "..".
				printf 'p=${%s:-}\n' "$partvar"
				printf 'case $p in "" | .* | */*) exit 0 ;; esac\n'
				printf 'h=%q/$p/%s\n' "$dir/hooks/p" "$ctx"
				printf '[ -x "$h" ] || exit 0\n'
				printf 'exec "$h" "$@"\n'
			else
				wrapper_body "$ctx" "$dir/hooks/hooks.log"
			fi
		} | write_if_changed "$f" 0755 || true
	done
}

# wrapper_body CTX LOG prints contrib/slurm's CTX wrapper around
# $GPUPROF_BIN and $GPUPROF_CONFIG, logging to LOG; with no GPUPROF_BIN, a
# wrapper that does nothing.
wrapper_body() {
	local src
	src=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/$1.sh
	[[ -r $src ]] || { echo "testcluster: $src missing: it is the $1 wrapper to install" >&2; exit 1; }
	printf '# The wrapper of %s.\n' "$src"
	if [[ -n ${GPUPROF_BIN:-} ]]; then
		printf 'GPUPROF_BIN=%q\n' "$GPUPROF_BIN"
		[[ -z ${GPUPROF_CONFIG:-} ]] || printf 'GPUPROF_CONFIG=%q\n' "$GPUPROF_CONFIG"
		printf 'GPUPROF_HOOK_LOG=%q\n' "$2"
		tail -n +2 "$src"
	else
		printf 'exit 0\n'
	fi
}

# write_partition_hooks writes PARTITION's wrappers of a --by-partition
# cluster, DIR/hooks/p/PARTITION/<ctx>, logging to hooks.log beside them.
write_partition_hooks() {
	local ctx d=$dir/hooks/p/$part
	[[ $part =~ ^[A-Za-z0-9_-]+$ ]] || die "partition name $part: want letters, digits, - and _"
	mkdir -p "$d"
	for ctx in prolog epilog jobcomp mailprog; do
		{
			printf '#!/bin/sh\n'
			wrapper_body "$ctx" "$d/hooks.log"
		} | write_if_changed "$d/$ctx" 0755 || true
	done
}

# example_hooks prints the gpuprof lines of the package's own example
# slurm.conf (slurm.conf.example beside this script, which the .deb and
# .rpm install as /usr/share/doc/gpuprof/examples/slurm.conf): Prolog=,
# Epilog=, PrologFlags=, PrologEpilogTimeout= and, with --jobcomp,
# JobCompType= and JobCompLoc=, each without its comment. The package's
# /usr/lib/gpuprof/<ctx>.sh becomes DIR/hooks/<ctx>: the same wrapper
# (write_hooks), generated around the test's gpuprof binary, configuration
# and log, since the test host has no package installed.
example_hooks() {
	local src line key n=0
	src=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/slurm.conf.example
	[[ -r $src ]] || die "$src missing: the package's example slurm.conf the hooks are configured from"
	while IFS= read -r line || [[ -n $line ]]; do
		line=${line%%#*}
		line=${line%"${line##*[![:space:]]}"}
		key=${line%%=*}
		case $key in
		Prolog | Epilog | PrologFlags | PrologEpilogTimeout) ;;
		JobCompType | JobCompLoc) ((jobcomp)) || continue ;;
		MailProg) ((mailprog)) || continue ;;
		*) continue ;;
		esac
		if [[ $line == */usr/lib/gpuprof/*.sh ]]; then
			line=${line/\/usr\/lib\/gpuprof\//$dir/hooks/}
			line=${line%.sh}
			[[ -e ${line#*=} ]] || die "$src: $key names ${line#*=}, which write_hooks did not write"
		fi
		printf '%s\n' "$line"
		n=$((n + 1))
	done <"$src"
	((n >= 4)) || die "$src: want Prolog=, Epilog=, PrologFlags= and PrologEpilogTimeout= in it, found $n gpuprof lines"
}

# write_conf writes slurm.conf, gres.conf and slurmdbd.conf; returns 0 when
# slurm.conf or gres.conf changed (the daemons must then restart).
write_conf() {
	local cpus changed=1 acct hooks mail
	cpus=${TESTCLUSTER_CPUS:-$(($(nproc) > 16 ? $(nproc) : 16))}
	if ((accounting)); then
		acct="AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStoragePort=$dbd_port
AccountingStorageTRES=gres/gpu,gres/shard"
	else
		acct="AccountingStorageType=accounting_storage/none"
	fi
	# The gpuprof lines, JobComp* with --jobcomp (slurmctld then runs the
	# wrapper at the end of every job, one at a time).
	hooks=$(example_hooks)
	local ctldparams=""
	((configless)) && ctldparams="SlurmctldParameters=enable_configless"
	# Without --mailprog, job mail goes nowhere (the example's MailProg=
	# line is left out).
	mail=
	((mailprog)) || mail=MailProg=/bin/true
	write_if_changed "$conf" 0644 <<EOF && changed=0
# Generated by testcluster.sh for a single-node test cluster.
ClusterName=$CLUSTER
SlurmctldHost=localhost
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CryptoType=crypto/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/slurmd
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/linux
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu,shard
$acct
# Hooks: gpuprof's lines of the package's example slurm.conf, its wrappers
# here (example_hooks). Alloc runs the prolog when the job is allocated,
# before its batch script starts.
$hooks
ReturnToService=2
MinJobAge=30
KillWait=5
MessageTimeout=10
SchedulerType=sched/backfill
$ctldparams
$mail
# The node advertises more CPUs than it has so that tests' sleeping jobs run
# concurrently; config_overrides makes slurmd accept the mismatch.
SlurmdParameters=config_overrides
NodeName=localhost CPUs=$cpus RealMemory=16000 Gres=gpu:$NGPU,shard:$NSHARD State=UNKNOWN
PartitionName=gpu Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
	write_if_changed "$dir/etc/gres.conf" 0644 <<EOF && changed=0
# Generated by testcluster.sh: $NGPU fake GPUs (character devices, major 195).
NodeName=localhost Name=gpu File=$dir/dev/nvidia[0-$((NGPU - 1))]
NodeName=localhost Name=shard Count=$NSHARD
EOF
	if ((accounting)); then
		write_if_changed "$dir/etc/slurmdbd.conf" 0600 <<EOF || true
# Generated by testcluster.sh. slurmdbd refuses a file others can read.
AuthType=auth/munge
DbdHost=localhost
DbdPort=$dbd_port
SlurmUser=root
DebugLevel=info
LogFile=$dir/log/slurmdbd.log
PidFile=$dir/run/slurmdbd.pid
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$db_port
StorageUser=slurm
StoragePass=gpuproftest
StorageLoc=slurm_acct_db
EOF
	fi
	return "$changed"
}

# ---------------------------------------------------------------- daemons

db_ok() { mariadb --no-defaults -S "$dir/run/mariadb.sock" -u root -e 'SELECT 1'; }

start_mariadb() {
	local data=$dir/db
	alive "$dir/run/mariadb.pid" mariadbd && db_ok >/dev/null 2>&1 && return 0
	if [[ ! -d $data/mysql ]]; then
		log "initialising MariaDB in $data"
		mkdir -p "$data" "$dir/dbtmp"
		# Native AIO off: each server reserves AIO contexts from the host's
		# fs.aio-max-nr, shared by every cluster the tests start at once.
		# A temporary directory of the cluster's own: at start-up (and in
		# mariadb-install-db's bootstrap) MariaDB deletes every "#sql*"
		# file in its tmpdir as left over from an earlier run, so with the
		# default /tmp one cluster's server starting deleted another's
		# bootstrap tables ("Could not remove temporary table
		# '/tmp/#sql-temptable-…'", "Unknown table 'mysql.tmp_user_sys'";
		# seen 2026-12-07 with four clusters starting at once). One retry on
		# a clean directory is kept for other causes; the error lines are
		# shown.
		local try
		for try in 1 2; do
			mariadb-install-db --no-defaults --user=root --datadir="$data" \
				--skip-test-db --auth-root-authentication-method=socket \
				--innodb-use-native-aio=0 --tmpdir="$dir/dbtmp" \
				>"$dir/log/mariadb-install.log" 2>&1 && break
			grep -i -E 'error|fail|abort' "$dir/log/mariadb-install.log" | head -n 20 >&2
			if [[ $try == 2 ]]; then
				tail -n 20 "$dir/log/mariadb-install.log" >&2
				die "mariadb-install-db failed"
			fi
			log "mariadb-install-db failed; once more on a clean $data"
			rm -rf "$data"
			mkdir -p "$data"
			sleep 2
		done
	fi
	log "starting MariaDB on 127.0.0.1:$db_port"
	mkdir -p "$dir/dbtmp"
	setsid /usr/sbin/mariadbd --no-defaults --user=root --datadir="$data" \
		--socket="$dir/run/mariadb.sock" --port="$db_port" --bind-address=127.0.0.1 \
		--pid-file="$dir/run/mariadb.pid" --log-error="$dir/log/mariadb.log" \
		--skip-name-resolve --innodb-buffer-pool-size=64M --innodb-lock-wait-timeout=900 \
		--innodb-use-native-aio=0 --tmpdir="$dir/dbtmp" \
		</dev/null >/dev/null 2>&1 &
	wait_for 60 MariaDB db_ok || {
		show_logs
		die "MariaDB did not start"
	}
	mariadb --no-defaults -S "$dir/run/mariadb.sock" -u root <<'EOF'
CREATE DATABASE IF NOT EXISTS slurm_acct_db;
CREATE USER IF NOT EXISTS 'slurm'@'127.0.0.1' IDENTIFIED BY 'gpuproftest';
GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';
EOF
}

start_slurmdbd() {
	if ! alive "$dir/run/slurmdbd.pid" slurmdbd; then
		log "starting slurmdbd on port $dbd_port"
		/usr/sbin/slurmdbd || {
			show_logs
			die "slurmdbd did not start"
		}
	fi
	wait_for 30 slurmdbd sacctmgr -n -P show cluster || {
		show_logs
		die "slurmdbd does not answer"
	}
	if [[ -z $(sacctmgr -n -P show cluster where name="$CLUSTER" format=cluster) ]]; then
		sacctmgr -i add cluster "$CLUSTER" >/dev/null
	fi
}

node_idle() { [[ $(sinfo -h -n localhost -o %t 2>/dev/null) == idle ]]; }
node_known() {
	case $(sinfo -h -n localhost -o %t 2>/dev/null) in
	"" | unk* | down*) return 1 ;;
	esac
}

start_slurm() {
	if ! running_ctld; then
		log "starting slurmctld on port $ctld_port"
		/usr/sbin/slurmctld -f "$conf" || {
			show_logs
			die "slurmctld did not start"
		}
	fi
	if ! alive "$dir/run/slurmd.pid" slurmd; then
		log "starting slurmd on port $slurmd_port"
		if ((configless)); then
			# No slurm.conf for slurmd: it fetches the files from
			# slurmctld, as a configless node's does, and links
			# /run/slurm/conf to its cache. That link is host-wide,
			# where every other gpuprof and Slurm of the host would
			# find it: slurmd (and so its hooks and jobs) gets a mount
			# namespace of its own with a private /run/slurm; callers
			# enter it (nsenter --mount=/proc/SLURMD/ns/mnt) to see
			# the node as its hooks do.
			mkdir -p /run/slurm
			unshare --mount --propagation private /bin/sh -c \
				'mount -t tmpfs -o mode=0755 gpuproftest-run /run/slurm && exec env -u SLURM_CONF /usr/sbin/slurmd --conf-server "$1" -N localhost' \
				sh "localhost:$ctld_port" || {
				show_logs
				die "slurmd (configless) did not start"
			}
		else
			/usr/sbin/slurmd -f "$conf" -N localhost || {
				show_logs
				die "slurmd did not start"
			}
		fi
	fi
	# A node drained by a failed hook in an earlier run stays drained across
	# restarts (slurmctld saves node state); start means "make it usable".
	wait_for 10 "slurmd to register" node_known || true
	if [[ $(sinfo -h -n localhost -o %t 2>/dev/null) == drain* ]]; then
		log "node localhost was drained ($(sinfo -h -R -o %E)); resuming it"
		scontrol update NodeName=localhost State=RESUME
	fi
	wait_for "$WAIT_S" "node localhost to be idle" node_idle || {
		sinfo -N -l >&2 || true
		show_logs
		die "the node did not become idle"
	}
	# sinfo answers from whatever slurmctld holds the port: make sure it
	# was this cluster's.
	running_ctld && alive "$dir/run/slurmd.pid" slurmd || {
		show_logs
		die "slurmctld or slurmd exited (another cluster on port $ctld_port?)"
	}
}

# stop_slurm cancels the cluster's jobs (slurmstepd and job processes outlive
# slurmd otherwise), then stops the daemons and any slurmstepd of this cluster
# that is left.
stop_slurm() {
	local i pid
	if running_ctld && [[ -n $(squeue -h -o %i 2>/dev/null) ]]; then
		scancel --full $(squeue -h -o %i) 2>/dev/null || true
		for ((i = 0; i < 100; i++)); do
			[[ -z $(squeue -h -o %i 2>/dev/null) ]] && break
			sleep 0.2
		done
	fi
	stop_pidfile "$dir/run/slurmctld.pid" slurmctld
	stop_pidfile "$dir/run/slurmd.pid" slurmd
	# slurmstepd inherits slurmd's environment, SLURM_CONF included: that is
	# how this cluster's steps are told from another cluster's.
	for pid in $(pgrep -x slurmstepd || true); do
		if tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qxF -e "SLURM_CONF=$conf" -e "SLURM_CONF=$dir/spool/slurmd/conf-cache/slurm.conf"; then
			kill -KILL "$pid" 2>/dev/null || true
		fi
	done
}

# ---------------------------------------------------------------- commands

do_start() {
	[[ $(id -u) == 0 ]] || die "must run as root"
	mkdir -p "$dir"/{etc,run,log,state,spool/slurmd,hooks}
	# Jobs, hooks and the agent may run as other users; they need to reach
	# files under DIR (created 0700 by mktemp -d and Go's t.TempDir).
	chmod 0755 "$dir"
	# A DIR that held an accounting cluster keeps its slurmdbd.conf; starting
	# without --accounting must not bring slurmdbd back, and the reverse needs
	# the packages.
	local -a pkgs=(slurmctld:slurmctld slurmd:slurmd sbatch:slurm-client munged:munge ss:iproute2)
	((accounting)) && pkgs+=(slurmdbd:slurmdbd mariadbd:mariadb-server mariadb:mariadb-client)
	need_pkgs "${pkgs[@]}"
	start_munge
	make_devices
	write_hooks
	pick_ports
	if write_conf; then
		if running_ctld || alive "$dir/run/slurmd.pid" slurmd; then
			log "configuration changed; restarting slurmctld and slurmd"
			stop_slurm
		fi
	fi
	if ((accounting)); then
		start_mariadb
		start_slurmdbd
	else
		stop_pidfile "$dir/run/slurmdbd.pid" slurmdbd
		stop_pidfile "$dir/run/mariadb.pid" mariadbd
	fi
	start_slurm
	if ((accounting)); then
		wait_for 30 sacct sacct -n -X -a || {
			show_logs
			die "sacct does not answer"
		}
	fi
	log "cluster $CLUSTER is up in $dir"
	printf 'SLURM_CONF=%q\n' "$conf"
}

# do_munge starts munged (when it does not answer) and nothing else: for
# tests that need munge credentials but no Slurm.
do_munge() {
	[[ $(id -u) == 0 ]] || die "must run as root"
	mkdir -p "$dir/log"
	need_pkgs munged:munge
	start_munge
}

do_stop() {
	[[ -d $dir ]] || die "$dir does not exist"
	stop_slurm
	stop_pidfile "$dir/run/slurmdbd.pid" slurmdbd
	stop_pidfile "$dir/run/mariadb.pid" mariadbd
	log "stopped; $dir is kept for inspection"
}

do_status() {
	local rc=0 d
	for d in slurmctld slurmd slurmdbd:optional mariadbd:optional; do
		local name=${d%%:*} pidf=$dir/run/${d%%:*}.pid
		[[ $name == mariadbd ]] && pidf=$dir/run/mariadb.pid
		if alive "$pidf" "$name"; then
			printf '%-10s running (pid %s)\n' "$name" "$(<"$pidf")"
		else
			printf '%-10s stopped\n' "$name"
			[[ $d == *:optional ]] || rc=1
		fi
	done
	if ((rc == 0)); then
		sinfo -N -o '%N %t %G %E' || rc=1
	fi
	return "$rc"
}

case $cmd in
start) do_start ;;
hooks)
	[[ -n $part ]] || usage
	write_partition_hooks
	;;
stop) do_stop ;;
status) do_status ;;
munge) do_munge ;;
*) usage ;;
esac
