#!/bin/sh
# Stand-in for scancel: appends its arguments as one line to
# $NOTICE_CAPTURE/scancel.
printf '%s\n' "$*" >> "${NOTICE_CAPTURE:?}/scancel"
