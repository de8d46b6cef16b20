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
# -noreset: by default Xvfb resets itself whenever its last client leaves, and
# a connection made during the reset is refused ("Can't open display") — as
# when gtk-launch, the only client, exits before the app it started connects
# (measured: 5 of 300 back-to-back xdotool calls refused without it, 0 with).
Xvfb ":$num" -noreset -screen 0 1600x1000x24 -nolisten tcp >/tmp/xvfb-$num.log 2>&1 &
xvfb=$!
trap 'kill $xvfb 2>/dev/null || true' EXIT
export DISPLAY=":$num"
# Ready is when the server answers, not when its socket appears (under load
# the two can be seconds apart).
for _ in $(seq 1 300); do
  xdotool getdisplaygeometry >/dev/null 2>&1 && break
  kill -0 "$xvfb" 2>/dev/null || { echo "Xvfb :$num exited before it answered:" >&2; cat "/tmp/xvfb-$num.log" >&2; exit 1; }
  sleep 0.1
done
xdotool getdisplaygeometry >/dev/null 2>&1 || { echo "Xvfb :$num did not answer within 30 s" >&2; cat "/tmp/xvfb-$num.log" >&2; exit 1; }
status=0
"$@" || status=$?
if [ "$status" -ne 0 ] && ! xdotool getdisplaygeometry >/dev/null 2>&1; then
  # Say so when the display itself went away: the failure is then not the test's.
  echo "with-display: Xvfb :$num no longer answers (alive: $(kill -0 "$xvfb" 2>/dev/null && echo yes || echo no)); its log:" >&2
  cat "/tmp/xvfb-$num.log" >&2
fi
exit "$status"
