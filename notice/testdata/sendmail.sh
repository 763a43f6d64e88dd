#!/bin/sh
# Stand-in for sendmail: writes its arguments (one per line) and the
# message it reads on stdin under $NOTICE_CAPTURE, one numbered pair per
# call, and exits with $NOTICE_EXIT (default 0).
dir=${NOTICE_CAPTURE:?}
n=$(ls "$dir" | grep -c '\.argv$')
n=$((n + 1))
printf '%s\n' "$@" > "$dir/$n.argv"
cat > "$dir/$n.msg"
if [ -n "$NOTICE_EXIT" ] && [ "$NOTICE_EXIT" != 0 ]; then
	echo "stand-in sendmail: refused (exit $NOTICE_EXIT)" >&2
	exit "$NOTICE_EXIT"
fi
exit 0
