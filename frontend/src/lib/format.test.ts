import { describe, expect, it } from 'vitest';
import { formatBytes, formatCount, formatDuration, formatNanos, lineOf, runDuration, runStatusLabel, sentence, stepStateLabel, waitingFor, worldRunState, countOf } from './format';

describe('durations', () => {
  it.each([
    [41, '41 ms'],
    [3200, '3.2 s'],
    [42_000, '42 s'],
    [245_000, '4 min 5 s'],
    [120_000, '2 min'],
    [7_380_000, '2 h 3 min'],
    [-1, '—'],
  ])('%i ms reads %s', (ms, want) => expect(formatDuration(ms)).toBe(want));

  it('reads Go durations as nanoseconds', () => {
    expect(formatNanos(120_000_000_000)).toBe('2 min');
  });

  it('measures a moving run to now and an ended one to its last update', () => {
    const now = Date.parse('2025-03-12T14:10:00Z');
    expect(runDuration('2025-03-12T14:00:00Z', '2025-03-12T14:01:00Z', 'running', now)).toBe(600_000);
    expect(runDuration('2025-03-12T14:00:00Z', '2025-03-12T14:01:00Z', 'completed', now)).toBe(60_000);
    expect(runDuration('nope', '2025-03-12T14:01:00Z', 'completed', now)).toBeNaN();
  });
});

describe('bytes', () => {
  it.each([
    [0, '0 B'],
    [1023, '1023 B'],
    [1536, '1.5 KiB'],
    [1 << 30, '1 GiB'],
    [256 << 20, '256 MiB'],
  ])('%i reads %s', (n, want) => expect(formatBytes(n)).toBe(want));
});

describe('labels', () => {
  it('names statuses', () => {
    expect(runStatusLabel('awaiting_approval')).toBe('awaiting approval');
    expect(runStatusLabel('terminated')).toBe('cancelled');
    expect(runStatusLabel('something_new')).toBe('something new');
    expect(stepStateLabel('in_doubt')).toBe('in doubt');
  });
});

describe('lineOf', () => {
  it('finds the line of a Starlark error', () => {
    expect(lineOf('world program line 14: undefined: foo')).toBe(14);
    expect(lineOf('world program line 3: load is not allowed')).toBe(3);
    expect(lineOf('fail: nope (line 7)')).toBe(7);
    expect(lineOf('the name is taken')).toBeUndefined();
    expect(lineOf('headline 4')).toBeUndefined();
  });
});

describe('sentence', () => {
  it('ends a message with a full stop so another can follow', () => {
    expect(sentence('Ollama is not reachable at http://127.0.0.1:1 (connection refused); correct the Ollama host in Settings')).toBe(
      'Ollama is not reachable at http://127.0.0.1:1 (connection refused); correct the Ollama host in Settings.',
    );
    expect(sentence(' Done. ')).toBe('Done.');
    expect(sentence('Really?')).toBe('Really?');
    expect(sentence('and so on…')).toBe('and so on…');
    expect(sentence('')).toBe('');
  });
});

describe('formatCount', () => {
  it('groups thousands the same way everywhere', () => {
    expect([formatCount(0), formatCount(999), formatCount(1000003)]).toEqual(['0', '999', '1,000,003']);
  });
});

describe('waitingFor', () => {
  it('counts from the last update while a run waits, and is undefined otherwise', () => {
    const now = Date.parse('2025-03-12T14:10:00Z');
    expect(waitingFor('2025-03-12T14:01:00Z', 'awaiting_approval', now)).toBe(540_000);
    expect(waitingFor('2025-03-12T14:01:00Z', 'paused', now)).toBe(540_000);
    expect(waitingFor('2025-03-12T14:01:00Z', 'running', now)).toBeUndefined();
    expect(waitingFor('2025-03-12T14:01:00Z', 'completed', now)).toBeUndefined();
  });
});

describe('worldRunState', () => {
  it('calls an open simulated run idle unless a batch of its steps is being computed', () => {
    expect(worldRunState({ status: 'running', worldLocalTime: 12 }, 'simulated')).toMatchObject({ key: 'idle', label: 'idle', title: expect.stringContaining('Idle at t=12') });
    expect(worldRunState({ status: 'running', worldLocalTime: 12, stepping: true }, 'simulated')).toMatchObject({ key: 'running', label: 'running' });
    expect(worldRunState({ status: 'completed', worldLocalTime: 12 }, 'simulated')).toMatchObject({ key: 'completed', label: 'completed' });
    // A task world's run is driven by the runtime: its status stands.
    expect(worldRunState({ status: 'running', worldLocalTime: 2 }, 'agentic')).toMatchObject({ key: 'running', label: 'running' });
  });
});

describe('countOf', () => {
  it('counts in English', () => {
    expect(countOf(1, 'fork')).toBe('1 fork');
    expect(countOf(0, 'fork')).toBe('0 forks');
    expect(countOf(5000, 'world')).toBe('5,000 worlds');
    expect(countOf(2, 'branch', 'branches')).toBe('2 branches');
  });
});
