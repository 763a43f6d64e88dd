#!/bin/sh
# gpuprof postinst (Debian "configure", RPM %post): the state and log
# directories with the modes gpuprof expects, and systemd told about the
# units. It starts and restarts nothing: the agent belongs on GPU nodes
# and the collector on one host, so the admin enables what the host needs
# (README, "Install"), and a running slurmd is never touched — restarting
# it would kill or requeue jobs.
set -e
case "${1:-}" in
configure | 1 | 2 | "")
	# The database and spool: root only (the database holds every user's
	# jobs; users read theirs through the agent's socket or the collector).
	install -d -m 0750 -o root -g root /var/lib/gpuprof /var/lib/gpuprof/spool
	install -d -m 0750 -o root -g root /var/log/gpuprof
	if [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then
		systemctl daemon-reload >/dev/null 2>&1 || true
	fi
	;;
esac
exit 0
