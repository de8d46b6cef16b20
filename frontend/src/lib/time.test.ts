import { describe, expect, it } from 'vitest';
import { formatAbsolute, formatRelative, formatSeconds, untilRelativeChange } from './time';

const now = Date.parse('2025-03-12T14:00:00Z');
const ago = (ms: number) => new Date(now - ms);

describe('formatRelative', () => {
  it.each([
    [0, 'just now'],
    [999, 'just now'],
    [3_000, '3 s ago'],
    [59_999, '59 s ago'],
    [60_000, '1 min ago'],
    [59 * 60_000, '59 min ago'],
    [2 * 3_600_000, '2 h ago'],
    [3 * 86_400_000, '3 d ago'],
  ])('%i ms ago reads %s', (ms, want) => {
    expect(formatRelative(ago(ms), now)).toBe(want);
  });

  it('reads RFC 3339 strings with microseconds', () => {
    expect(formatRelative('2025-03-12T13:59:57.123456Z', now)).toBe('2 s ago');
  });

  it('gives the local date past a week', () => {
    const t = ago(30 * 86_400_000);
    const want = `${t.getFullYear()}-${String(t.getMonth() + 1).padStart(2, '0')}-${String(t.getDate()).padStart(2, '0')}`;
    expect(formatRelative(t, now)).toBe(want);
  });

  it('treats small clock skew as now and large skew as a date', () => {
    expect(formatRelative(ago(-20_000), now)).toBe('just now');
    expect(formatRelative(ago(-2 * 3_600_000), now)).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$/);
  });

  it('says so when the time cannot be read', () => {
    expect(formatRelative('yesterday-ish', now)).toBe('unknown time');
  });
});

describe('formatAbsolute', () => {
  it('keeps microseconds and renders local time', () => {
    const got = formatAbsolute('2025-03-12T14:03:22.123456Z');
    expect(got).toMatch(/^2025-03-1[123] \d{2}:03:22\.123456$/);
  });

  it('pads the fraction Go trims', () => {
    expect(formatAbsolute('2025-03-12T14:03:22.1Z')).toMatch(/:22\.100000$/);
    expect(formatAbsolute('2025-03-12T14:03:22Z')).toMatch(/:22\.000000$/);
  });

  it('cuts nanoseconds to microseconds', () => {
    expect(formatAbsolute('2025-03-12T14:03:22.123456789+02:00')).toMatch(/:22\.123456$/);
  });

  it('returns an unreadable time unchanged', () => {
    expect(formatAbsolute('not a time')).toBe('not a time');
  });
});

describe('untilRelativeChange', () => {
  const t = '2025-03-12T14:00:00Z';
  const at = (ms: number) => Date.parse(t) + ms;

  it('says when the relative label next reads differently', () => {
    for (const [age, wait] of [
      [400, 600], // just now → 1 s ago
      [3_200, 800], // 3 s → 4 s
      [61_000, 59_000], // 1 min → 2 min
      [2 * 3_600_000 + 5_000, 3_600_000 - 5_000], // 2 h → 3 h
      [3 * 86_400_000, 86_400_000], // 3 d → 4 d
    ] as const) {
      const now = at(age);
      expect(untilRelativeChange(t, now), `at ${age} ms`).toBe(wait);
      expect(formatRelative(t, now + wait - 1)).toBe(formatRelative(t, now));
      expect(formatRelative(t, now + wait)).not.toBe(formatRelative(t, now));
    }
  });

  it('never, once it is a date or not a time', () => {
    expect(untilRelativeChange(t, at(8 * 86_400_000))).toBe(Infinity);
    expect(untilRelativeChange(t, at(-2 * 60_000))).toBe(Infinity);
    expect(untilRelativeChange('not a time', at(0))).toBe(Infinity);
  });
});

describe('formatSeconds', () => {
  it('is formatAbsolute without the fraction, and leaves what is not a time as it is', () => {
    const t = '2025-03-12T14:03:22.123456Z';
    expect(formatSeconds(t)).toBe(formatAbsolute(t).replace(/\.\d{6}$/, ''));
    expect(formatSeconds(t)).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    expect(formatSeconds('soon')).toBe('soon');
  });
});
