import { describe, expect, it } from 'vitest';
import { layoutDag, midpoint, pathOf } from './layout';

const box = (id: string) => ({ id, width: 100, height: 30 });

describe('layoutDag', () => {
  it('places parents left of children, layer by layer', () => {
    const l = layoutDag([box('a'), box('b'), box('c'), box('d')], [
      { id: 'ab', from: 'a', to: 'b' },
      { id: 'ac', from: 'a', to: 'c' },
      { id: 'cd', from: 'c', to: 'd' },
    ]);
    const a = l.nodes.get('a')!;
    const b = l.nodes.get('b')!;
    const c = l.nodes.get('c')!;
    const d = l.nodes.get('d')!;
    expect(b.x).toBeGreaterThan(a.x + a.width);
    expect(c.x).toBe(b.x); // same layer
    expect(d.x).toBeGreaterThan(c.x + c.width);
    expect(b.y).not.toBe(c.y);
    expect(l.edges.get('cd')!.length).toBeGreaterThanOrEqual(2);
    expect(l.width).toBeGreaterThan(3 * 100);
  });

  it('is deterministic', () => {
    const nodes = ['a', 'b', 'c', 'd', 'e'].map(box);
    const edges = [
      { id: '1', from: 'a', to: 'b' },
      { id: '2', from: 'a', to: 'c' },
      { id: '3', from: 'b', to: 'd' },
      { id: '4', from: 'c', to: 'e' },
    ];
    const one = layoutDag(nodes, edges);
    const two = layoutDag(nodes, edges);
    expect([...two.nodes]).toEqual([...one.nodes]);
  });

  it('ranks a deep chain by depth even with a shortcut edge', () => {
    const l = layoutDag(['a', 'b', 'c'].map(box), [
      { id: '1', from: 'a', to: 'b' },
      { id: '2', from: 'b', to: 'c' },
      { id: '3', from: 'a', to: 'c' },
    ]);
    expect(l.nodes.get('c')!.x).toBeGreaterThan(l.nodes.get('b')!.x);
  });

  it('skips edges to nodes it was not given and self edges', () => {
    const l = layoutDag([box('a')], [
      { id: 'x', from: 'a', to: 'ghost' },
      { id: 'y', from: 'a', to: 'a' },
    ]);
    expect(l.nodes.size).toBe(1);
    expect(l.edges.size).toBe(0);
  });

  it('lays out a large fork forest without crossing edges', () => {
    const nodes = Array.from({ length: 600 }, (_, i) => box(`n${i}`));
    const parent = (i: number) => Math.floor((i - 1) / 3);
    const edges = nodes.slice(1).map((n, k) => ({ id: `e${k}`, from: `n${parent(k + 1)}`, to: n.id }));
    const l = layoutDag(nodes, edges);
    expect(l.nodes.size).toBe(600);
    // Two edges between the same two layers cross when their ends are in opposite orders.
    const y = (i: number) => l.nodes.get(`n${i}`)!.y;
    const byLayer = new Map<number, number[]>();
    for (let i = 1; i < 600; i++) {
      const x = l.nodes.get(`n${i}`)!.x;
      byLayer.set(x, [...(byLayer.get(x) ?? []), i]);
    }
    for (const kids of byLayer.values()) {
      kids.sort((a, b) => y(a) - y(b));
      for (let k = 1; k < kids.length; k++) expect(y(parent(kids[k]!))).toBeGreaterThanOrEqual(y(parent(kids[k - 1]!)));
    }
  });
});

describe('pathOf and midpoint', () => {
  it('draws through the ends', () => {
    expect(pathOf([])).toBe('');
    expect(pathOf([{ x: 0, y: 0 }, { x: 10, y: 0 }])).toBe('M0,0L10,0');
    const d = pathOf([{ x: 0, y: 0 }, { x: 5, y: 5 }, { x: 10, y: 0 }]);
    expect(d.startsWith('M0,0')).toBe(true);
    expect(d.endsWith('10,0')).toBe(true);
  });

  it('finds the middle of a polyline', () => {
    expect(midpoint([{ x: 0, y: 0 }, { x: 10, y: 0 }])).toEqual({ x: 5, y: 0 });
    expect(midpoint([{ x: 0, y: 0 }, { x: 0, y: 10 }, { x: 10, y: 10 }])).toEqual({ x: 0, y: 10 });
    expect(midpoint([])).toBeUndefined();
  });
});
