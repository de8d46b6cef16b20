import { describe, expect, it } from 'vitest';
import { event } from '../test/fixtures';
import { alignByWorldTime, lastTime } from './compare';

const ev = (stream: string, seq: number, type: string, t: number, payload: unknown = {}, parentTime = 0) =>
  event({ seq, pos: seq, stream, type, reality: 'world_local', worldLocalTime: t, parentTime, payload });

describe('alignByWorldTime', () => {
  // The parent went on from t=5 with one event a tick; the child forked at
  // t=5 and then had two events at t=6 and nothing at t=7.
  const parent = [ev('run_p', 11, 'world.step', 6, { action: 'E' }), ev('run_p', 12, 'world.step', 7, { action: 'E' })];
  const child = [
    ev('run_c', 1, 'world.forked', 5, { divergence: 'state_patch' }, 5),
    ev('run_c', 2, 'world.step', 6, { action: 'E' }),
    ev('run_c', 3, 'world.event', 6, { moved: true }),
  ];

  it('starts at the fork point, then pairs what each side did at the same world time', () => {
    const d = alignByWorldTime(parent, child);
    expect(d.forkAt).toBe(5);
    expect(d.rows.map((r) => [r.t, r.first, r.a?.seq ?? null, r.b?.seq ?? null, r.same])).toEqual([
      [5, true, null, 1, false],
      [6, true, 11, 2, true],
      [6, false, null, 3, false],
      [7, true, 12, null, false],
    ]);
    expect(d.times).toBe(3);
    expect(d.differing).toBe(3);
  });

  it('says nothing differs when both sides did the same at every time', () => {
    const d = alignByWorldTime(parent, parent);
    expect(d.differing).toBe(0);
    expect(d.forkAt).toBeUndefined();
  });

  it('gives a branch its newest world time', () => {
    expect(lastTime(parent)).toBe(7);
    expect(lastTime([], 5)).toBe(5);
  });
});
