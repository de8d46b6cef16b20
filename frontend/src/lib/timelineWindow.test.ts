import { describe, expect, it } from 'vitest';
import { contentHeight, rowWindow, scaleOf, scrollTopFor } from './timelineWindow';

describe('rowWindow', () => {
  const small = { count: 100, rowHeight: 28, viewport: 280 };

  it('draws the rows in view and a few more, each at its place', () => {
    expect(contentHeight(small)).toBe(2800);
    expect(scaleOf(small)).toBe(1);
    const w = rowWindow(small, 280, 2);
    expect([w.first, w.last]).toEqual([8, 22]);
    expect(w.top(10)).toBe(280);
    expect(rowWindow(small, 0, 2).first).toBe(0);
    expect(rowWindow(small, 2520, 2).last).toBe(99);
    expect(rowWindow({ ...small, count: 0 }, 0)).toMatchObject({ first: 0, last: -1 });
  });

  it('scales a list taller than the box, so a million rows scroll end to end', () => {
    const g = { count: 1_000_000, rowHeight: 28, viewport: 560 };
    expect(contentHeight(g)).toBe(15_000_000);
    const scale = scaleOf(g);
    expect(scale).toBeCloseTo((28_000_000 - 560) / (15_000_000 - 560));
    // At the top, row 0 is at the top; at the end, the last row ends at the view's bottom.
    expect(rowWindow(g, 0, 0)).toMatchObject({ first: 0 });
    const end = 15_000_000 - 560;
    const w = rowWindow(g, end, 0);
    expect(w.last).toBe(999_999);
    expect(w.top(999_999) + 28).toBeCloseTo(end + 560);
    // Rows in view sit one under another, where the view is.
    const mid = rowWindow(g, 7_000_000, 0);
    expect(mid.top(mid.first + 1) - mid.top(mid.first)).toBe(28);
    expect(mid.top(mid.first)).toBeLessThanOrEqual(7_000_000);
    expect(mid.top(mid.first) + 28).toBeGreaterThan(7_000_000);
  });

  it('scrolls to a row at the start, centre or end of the view', () => {
    expect(scrollTopFor(small, 50, 'start')).toBe(1400);
    expect(scrollTopFor(small, 50, 'center')).toBe(1400 - 126);
    expect(scrollTopFor(small, 99, 'end')).toBe(2800 - 280);
    expect(scrollTopFor(small, 0, 'end')).toBe(0);
    const g = { count: 1_000_000, rowHeight: 28, viewport: 560 };
    for (const i of [0, 123_456, 500_000, 999_999]) {
      const top = scrollTopFor(g, i, 'center');
      const w = rowWindow(g, top, 0);
      expect(i).toBeGreaterThanOrEqual(w.first);
      expect(i).toBeLessThanOrEqual(w.last);
    }
  });
});
