#!/bin/sh
# Stand-in for squeue --noheader --jobs=ID --format=%q|%j: prints
# $NOTICE_SQUEUE (a QOS|name line), or nothing for an ended job.
printf '%s' "$NOTICE_SQUEUE"
