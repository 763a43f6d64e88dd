#!/bin/sh
# gpuprof postrm: the database (/var/lib/gpuprof) is the site's history and
# stays, on remove and on purge alike; delete it by hand when it is no
# longer wanted. Purge removes the logs.
set -e
case "${1:-}" in
purge)
	rm -rf /var/log/gpuprof
	;;
esac
if [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then
	systemctl daemon-reload >/dev/null 2>&1 || true
fi
exit 0
