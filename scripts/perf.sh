#!/usr/bin/env bash
# The GUI's performance targets, measured for real and reported as a table of
# goal against measured (tests/perf/perf.mjs): the lineage of 5,000 generated
# worlds and the timeline of a 1M-event world in Chromium (`ducklm serve`),
# and the desktop app's idle memory under an X display (Xvfb when there is
# none). Not part of `make test`: it takes minutes and its numbers depend on
# the machine, so read them with the load printed beside each.
#   scripts/perf.sh                      everything
#   PERF_ONLY=lineage scripts/perf.sh    lineage, deliberation, timeline and/or memory
#   PERF_WORLDS=2000 PERF_EVENTS=200000 scripts/perf.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export DUCKLM_BIN=${DUCKLM_BIN:-$PWD/build/bin/ducklm}
[ -d tests/e2e/node_modules/playwright-core ] || (cd tests/e2e && npm ci --no-audit --no-fund)
mkdir -p tests/artifacts
exec scripts/with-display.sh node tests/perf/perf.mjs
