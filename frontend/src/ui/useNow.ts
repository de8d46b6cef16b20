import { useEffect, useRef, useState } from 'react';
import { untilRelativeChange } from '../lib/time';

/**
 * useRelativeNow returns the current time in ms, refreshed when one of times
 * shown relative to it ("3 s ago", "4 min ago") would read differently, and
 * every tickMs as well when something ticks (a running run's duration). A
 * table of hour-old events redraws once an hour, not every second: WebKit
 * holds on to memory for every redraw of the window (tests/perf measured a
 * home screen of fifty old events growing 0.14 MB a second).
 */
export function useRelativeNow(times: readonly string[], tickMs?: number): number {
  const [now, setNow] = useState(() => Date.now());
  const key = times.join('\n');
  const shownKey = useRef(key);
  useEffect(() => {
    const at = Date.now();
    if (shownKey.current !== key) {
      // Other times are shown now (new rows): read the clock for them at once.
      shownKey.current = key;
      if (at !== now) {
        setNow(at);
        return;
      }
    }
    let wait = tickMs ?? Infinity;
    for (const t of key === '' ? [] : key.split('\n')) wait = Math.min(wait, untilRelativeChange(t, at));
    if (!Number.isFinite(wait)) return;
    // A little past the turn, so the label has changed when it is drawn.
    const id = setTimeout(() => setNow(Date.now()), Math.min(Math.max(wait + 20, 50), 2 ** 31 - 1));
    return () => clearTimeout(id);
  }, [key, now, tickMs]);
  return now;
}
