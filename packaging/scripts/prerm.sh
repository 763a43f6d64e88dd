#!/bin/sh
# gpuprof prerm (Debian "remove", RPM %preun with 0 left): stop gpuprof's
# own services before their binary goes. slurmd keeps running; its hooks'
# wrappers exit 0 when the binary is gone, so jobs are not held or drained.
set -e
case "${1:-}" in
remove | 0)
	if [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then
		for u in gpuprof-import.timer gpuprof-agent.service gpuprof-serve.service; do
			systemctl stop "$u" >/dev/null 2>&1 || true
		done
	fi
	;;
esac
exit 0
