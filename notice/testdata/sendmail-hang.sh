#!/bin/sh
# Stand-in for a sendmail that never answers (a dead relay): it reads the
# message, then waits in a child process that keeps stdout open.
cat > /dev/null
sleep 60
