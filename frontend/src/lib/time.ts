// Time as the event table shows it: relative to now for scanning, absolute
// (local, to the microsecond the ledger records) on hover.

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

function toMillis(t: string | Date): number {
  return typeof t === 'string' ? Date.parse(t) : t.getTime();
}

function pad(n: number, width = 2): string {
  return String(n).padStart(width, '0');
}

function localDate(d: Date): string {
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
}

function localClock(d: Date): string {
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/**
 * formatRelative says how long ago t was: "just now", "3 s ago", "4 min ago",
 * "2 h ago", "5 d ago", then the local date. A time in the future (clock skew
 * between machines) reads "just now" within a minute and as a date beyond.
 */
export function formatRelative(t: string | Date, now: number): string {
  const ms = toMillis(t);
  if (Number.isNaN(ms)) return 'unknown time';
  const diff = now - ms;
  if (diff < SECOND) {
    if (diff > -MINUTE) return 'just now';
    const d = new Date(ms);
    return `${localDate(d)} ${localClock(d).slice(0, 5)}`;
  }
  if (diff < MINUTE) return `${Math.floor(diff / SECOND)} s ago`;
  if (diff < HOUR) return `${Math.floor(diff / MINUTE)} min ago`;
  if (diff < DAY) return `${Math.floor(diff / HOUR)} h ago`;
  if (diff < 7 * DAY) return `${Math.floor(diff / DAY)} d ago`;
  return localDate(new Date(ms));
}

/**
 * untilRelativeChange is how many ms after now formatRelative(t, now) next
 * reads differently: a second for "3 s ago", the next minute's turn for
 * "4 min ago", and so on; Infinity once it shows a date. A screen redraws
 * its relative times then, not every second.
 */
export function untilRelativeChange(t: string | Date, now: number): number {
  const ms = toMillis(t);
  if (Number.isNaN(ms)) return Infinity;
  const diff = now - ms;
  if (diff < -MINUTE) return Infinity; // a date in the future, until clocks agree
  if (diff < SECOND) return SECOND - diff; // "just now", also for a skewed clock
  for (const [unit, upTo] of [
    [SECOND, MINUTE],
    [MINUTE, HOUR],
    [HOUR, DAY],
    [DAY, 7 * DAY],
  ] as const) {
    if (diff < upTo) return unit - (diff % unit);
  }
  return Infinity;
}

/**
 * formatAbsolute renders an RFC 3339 time in local time with its fraction
 * kept to microseconds ("2025-03-12 14:03:22.123450"), which Date alone
 * would cut to milliseconds. Go omits trailing zeros, so the fraction is
 * padded.
 */
export function formatAbsolute(t: string): string {
  const ms = Date.parse(t);
  if (Number.isNaN(ms)) return t;
  const d = new Date(ms);
  const fraction = /T\d{2}:\d{2}:\d{2}\.(\d+)/.exec(t)?.[1] ?? '';
  const micros = fraction.padEnd(6, '0').slice(0, 6);
  return `${localDate(d)} ${localClock(d)}.${micros}`;
}

/** formatSeconds renders an RFC 3339 time in local time to the second ("2025-03-12 14:03:22"), for a sentence; formatAbsolute keeps the fraction for a tooltip. */
export function formatSeconds(t: string): string {
  const ms = Date.parse(t);
  if (Number.isNaN(ms)) return t;
  const d = new Date(ms);
  return `${localDate(d)} ${localClock(d)}`;
}
