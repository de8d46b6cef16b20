import { describe, expect, it } from 'vitest';
import { event } from '../test/fixtures';
import { changeMarks, compact, defaultExpanded, diffCounts, escapeKey, expandToChanges, pairEvents, pointerSegments, toggle, treeRows } from './json';

describe('pointers', () => {
  it('escapes and splits', () => {
    expect(escapeKey('a/b~c')).toBe('a~1b~0c');
    expect(pointerSegments('/a~1b~0c/0')).toEqual(['a/b~c', '0']);
    expect(pointerSegments('')).toEqual([]);
  });
});

describe('treeRows', () => {
  const state = { size: 9, pos: [1, 2], params: { noise: 0.2 }, name: 'x' };

  it('shows the root closed', () => {
    const rows = treeRows(state, new Set());
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ path: '', kind: 'object', size: 4, expandable: true, expanded: false });
  });

  it('opens what is expanded, depth first', () => {
    const rows = treeRows(state, new Set(['', '/pos']));
    expect(rows.map((r) => [r.path, r.depth, r.text])).toEqual([
      ['', 0, '{"size":9,"pos":[1,2],"params":{"noise":0.2},"name":"x"}'],
      ['/size', 1, '9'],
      ['/pos', 1, '[1,2]'],
      ['/pos/0', 2, '1'],
      ['/pos/1', 2, '2'],
      ['/params', 1, '{"noise":0.2}'],
      ['/name', 1, '"x"'],
    ]);
  });

  it('bounds the rows', () => {
    const big = Array.from({ length: 100 }, (_, i) => i);
    expect(treeRows(big, new Set(['']), 10)).toHaveLength(10);
  });

  it('opens the first level by default and toggles', () => {
    expect([...defaultExpanded(state)].sort()).toEqual(['', '/params', '/pos']);
    expect([...toggle(new Set(['']), '')]).toEqual([]);
    expect([...toggle(new Set(), '/pos')]).toEqual(['/pos']);
  });

  it('renders scalars at the root', () => {
    expect(treeRows(null, new Set())[0]).toMatchObject({ kind: 'null', text: 'null', expandable: false });
    expect(compact(undefined)).toBe('');
  });
});

describe('diff helpers', () => {
  const changes = [
    { path: '/pos/0', kind: 'changed' as const, a: 1, b: 2 },
    { path: '/params/seed', kind: 'added' as const, b: 7 },
  ];

  it('marks changed paths and their parents', () => {
    const m = changeMarks(changes);
    expect(m.get('/pos/0')).toBe('changed');
    expect(m.get('/pos')).toBe('inside');
    expect(m.get('')).toBe('inside');
    expect(m.get('/params/seed')).toBe('added');
  });

  it('opens the way to each change', () => {
    expect([...expandToChanges(changes)].sort()).toEqual(['', '/params', '/pos']);
  });

  it('counts kinds', () => {
    expect(diffCounts(changes)).toEqual({ added: 1, removed: 0, changed: 1 });
  });

  it('pairs events side by side', () => {
    const a = [event({ seq: 4, pos: 4, type: 'world.step', payload: { x: 1 } }), event({ seq: 5, pos: 5, type: 'world.step' })];
    const b = [event({ seq: 4, pos: 8, type: 'world.step', payload: { x: 1 } })];
    const p = pairEvents(a, b);
    expect(p).toHaveLength(2);
    expect(p[0]!.same).toBe(true);
    expect(p[1]!.same).toBe(false);
    expect(p[1]!.b).toBeUndefined();
  });
});
