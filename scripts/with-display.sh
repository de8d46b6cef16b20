#!/usr/bin/env bash
# Runs a command with an X display: the current one, or a private Xvfb that is
# stopped afterwards (CI has no display).
set -euo pipefail
if [ -n "${DISPLAY:-}" ] && xdotool getdisplaygeometry >/dev/null 2>&1; then
  exec "$@"
fi
for n in $(seq 90 140); do
  [ -e "/tmp/.X11-unix/X$n" ] || [ -e "/tmp/.X$n-lock" ] || { num=$n; break; }
done
Xvfb ":$num" -screen 0 1600x1000x24 -nolisten tcp >/tmp/xvfb-$num.log 2>&1 &
xvfb=$!
trap 'kill $xvfb 2>/dev/null || true' EXIT
for _ in $(seq 1 50); do [ -e "/tmp/.X11-unix/X$num" ] && break; sleep 0.1; done
export DISPLAY=":$num"
"$@"
