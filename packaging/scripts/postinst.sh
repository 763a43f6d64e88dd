#!/bin/sh
# gpuprof postinst (Debian "configure", RPM %post): the service user and
# group, the state and log directories with the modes gpuprof expects, and
# systemd told about the units. It starts and restarts nothing: the agent
# belongs on GPU nodes and the collector on one host, so the admin enables
# what the host needs (README, "Install"), and a running slurmd is never
# touched — restarting it would kill or requeue jobs.
#
# Who writes the database: root (the agent and the node hooks), gpuprof
# (serve and import run as that user, docs/packaging.md) and the SlurmUser
# (slurmctld runs jobcomp as it). They share the group gpuprof:
# /var/lib/gpuprof, its spool and /var/log/gpuprof are root:gpuprof with
# mode 2770, so what is created there gets the group, and gpuprof makes the
# database (with its -wal and -shm files), spool records and logs it
# creates there group-writable. Nobody else reads them: the database holds
# every user's jobs, which users read through the agent's socket or serve.
set -e
case "${1:-}" in
configure | 1 | 2 | "")
	if ! getent group gpuprof >/dev/null; then
		if command -v addgroup >/dev/null 2>&1; then
			addgroup --quiet --system gpuprof
		else
			groupadd --system gpuprof
		fi
	fi
	if ! getent passwd gpuprof >/dev/null; then
		if command -v adduser >/dev/null 2>&1; then
			adduser --quiet --system --ingroup gpuprof --no-create-home \
				--home /var/lib/gpuprof --shell /usr/sbin/nologin gpuprof
		else
			useradd --system --gid gpuprof --no-create-home \
				--home-dir /var/lib/gpuprof --shell /sbin/nologin gpuprof
		fi
	fi
	# The SlurmUser of this host's slurm.conf ("slurm" in Debian's and
	# most sites' packages; root needs nothing) joins the group for
	# jobcomp. A running slurmctld takes the group at its next start.
	slurmuser=
	for conf in /etc/slurm/slurm.conf /etc/slurm-llnl/slurm.conf; do
		[ -r "$conf" ] || continue
		slurmuser=$(sed -n 's/^[[:space:]]*[Ss][Ll][Uu][Rr][Mm][Uu][Ss][Ee][Rr][[:space:]]*=[[:space:]]*\([^[:space:]#]*\).*/\1/p' "$conf" | tail -n 1)
		break
	done
	for u in ${slurmuser:-slurm}; do
		[ "$u" != root ] && getent passwd "$u" >/dev/null || continue
		id -nG "$u" | tr ' ' '\n' | grep -qx gpuprof && continue
		echo "gpuprof: added $u (the SlurmUser) to the group gpuprof; restart slurmctld when convenient so that jobcomp can write /var/lib/gpuprof" >&2
		if command -v adduser >/dev/null 2>&1; then
			adduser --quiet "$u" gpuprof
		else
			usermod -a -G gpuprof "$u"
		fi
	done
	# Root changes owners and modes below directories the group may write,
	# where gpuprof or the SlurmUser could have planted a link (spool ->
	# /etc, gpuprof.db -> /etc/shadow) for chown and chmod, which follow
	# links, to act on. So each directory is first made root's alone to
	# change (2750: the group still reads, and writes the files already
	# there, but can no longer create, rename or remove an entry: nothing
	# can be swapped while root looks and then acts); a link is removed or
	# left alone, never followed; a file is changed only when it is a
	# regular file with no other name; and last the group gets its write
	# access back. /var/lib and /var/log are root's: the two directories'
	# own paths cannot be swapped.
	for d in /var/lib/gpuprof /var/log/gpuprof; do
		install -d -m 2750 -o root -g gpuprof "$d"
		chown root:gpuprof "$d" # install -d leaves an existing directory's owner
		chmod 2750 "$d"
	done
	spool=/var/lib/gpuprof/spool
	if [ -L "$spool" ] || { [ -e "$spool" ] && [ ! -d "$spool" ]; }; then
		echo "gpuprof: $spool was not a directory (a link or file someone of the group gpuprof made?); replaced by one" >&2
		rm -f "$spool"
	fi
	install -d -m 2750 -o root -g gpuprof "$spool"
	chown root:gpuprof "$spool"
	chmod 2750 "$spool"
	# What an earlier gpuprof made root's alone (0640 root:root): the
	# database, its WAL and shm, the logs, and the spool's records (a run
	# as root before the package, or an older version, leaves them 0600:
	# serve, the gpuprof user, could then never ingest them), now the
	# group's too.
	for f in /var/lib/gpuprof/*.db /var/lib/gpuprof/*.db-wal /var/lib/gpuprof/*.db-shm /var/log/gpuprof/*.log \
		"$spool"/*.json "$spool"/*.log; do
		[ -f "$f" ] && [ ! -L "$f" ] || continue
		if [ "$(stat -c %h "$f")" != 1 ]; then
			echo "gpuprof: $f has other hard links (names elsewhere); its group and mode left as they are" >&2
			continue
		fi
		chgrp gpuprof "$f"
		chmod g+rw,o-rwx "$f"
	done
	chmod 2770 /var/lib/gpuprof /var/log/gpuprof "$spool"
	if [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then
		systemctl daemon-reload >/dev/null 2>&1 || true
	fi
	;;
esac
exit 0
