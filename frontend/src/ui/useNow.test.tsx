// @vitest-environment jsdom
import { act, cleanup, render } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { useRelativeNow } from './useNow';

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
  vi.setSystemTime(Date.parse('2025-03-12T15:00:00.000Z'));
});
afterEach(() => {
  cleanup();
  vi.useRealTimers();
});

function Probe({ times, tick, onRender }: { times: string[]; tick?: number; onRender: (now: number) => void }) {
  onRender(useRelativeNow(times, tick));
  return null;
}

describe('useRelativeNow', () => {
  it('redraws an hour-old list once an hour, not every second', () => {
    const renders: number[] = [];
    render(<Probe times={['2025-03-12T13:59:30.000Z', '2025-03-12T13:30:00.000Z']} onRender={(n) => renders.push(n)} />);
    const first = renders.length;
    act(() => vi.advanceTimersByTime(10 * 60_000));
    expect(renders.length).toBe(first);
    act(() => vi.advanceTimersByTime(20 * 60_000 + 1_000)); // 13:30 turns 2 h old at 15:30
    expect(renders.length).toBe(first + 1);
  });

  it('ticks with the youngest time, and every tick while something moves', () => {
    const renders: number[] = [];
    const { rerender } = render(<Probe times={['2025-03-12T14:59:58.500Z']} onRender={(n) => renders.push(n)} />);
    const first = renders.length;
    for (let i = 0; i < 5; i++) act(() => vi.advanceTimersByTime(1_000)); // a render lets the next timer be set
    expect(renders.length - first).toBeGreaterThanOrEqual(4); // "2 s ago", "3 s ago", …
    const before = renders.length;
    rerender(<Probe times={['2025-03-12T10:00:00.000Z']} tick={1000} onRender={(n) => renders.push(n)} />);
    for (let i = 0; i < 3; i++) act(() => vi.advanceTimersByTime(1_000));
    expect(renders.length - before).toBeGreaterThanOrEqual(3);
  });

  it('reads the clock at once for newly shown times', () => {
    const renders: number[] = [];
    const { rerender } = render(<Probe times={['2025-03-12T10:00:00.000Z']} onRender={(n) => renders.push(n)} />);
    act(() => vi.advanceTimersByTime(30 * 60_000));
    const stale = renders.at(-1)!;
    rerender(<Probe times={['2025-03-12T10:00:00.000Z', '2025-03-12T15:29:00.000Z']} onRender={(n) => renders.push(n)} />);
    expect(renders.at(-1)! - stale).toBeGreaterThanOrEqual(30 * 60_000);
  });
});
