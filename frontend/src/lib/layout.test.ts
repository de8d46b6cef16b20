import { describe, expect, it } from 'vitest';
import { forestOf, layoutDag, midpoint, pathOf } from './layout';

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

describe('forestOf', () => {
  it('reads children in edge order and roots in node order', () => {
    const f = forestOf(['a', 'b', 'c', 'd'].map(box), [
      { id: '1', from: 'a', to: 'c' },
      { id: '2', from: 'a', to: 'b' },
      { id: 'x', from: 'a', to: 'ghost' },
      { id: 'y', from: 'd', to: 'd' },
    ]);
    expect(f?.roots).toEqual(['a', 'd']);
    expect(f?.children.get('a')).toEqual([
      { node: 'c', edge: '1' },
      { node: 'b', edge: '2' },
    ]);
  });

  it('is not a forest with two parents or a cycle', () => {
    expect(forestOf(['a', 'b', 'c'].map(box), [
      { id: '1', from: 'a', to: 'c' },
      { id: '2', from: 'b', to: 'c' },
    ])).toBeUndefined();
    expect(forestOf(['a', 'b', 'c'].map(box), [
      { id: '1', from: 'a', to: 'b' },
      { id: '2', from: 'b', to: 'c' },
      { id: '3', from: 'c', to: 'b' },
    ])).toBeUndefined();
  });
});

describe('layoutDag with forests: tree', () => {
  const opts = { forests: 'tree' as const, ranksep: 50, nodesep: 10, margin: 16 };

  it('lays a forest out as tidy trees, layer by depth, and any other DAG with dagre', () => {
    const l = layoutDag(['a', 'b', 'c', 'd', 'r'].map(box), [
      { id: 'ab', from: 'a', to: 'b' },
      { id: 'ac', from: 'a', to: 'c' },
      { id: 'cd', from: 'c', to: 'd' },
    ], opts);
    expect(l.engine).toBe('tree');
    const [a, b, c, d, r] = ['a', 'b', 'c', 'd', 'r'].map((id) => l.nodes.get(id)!);
    expect(a!.x).toBe(16);
    expect(r!.x).toBe(16); // a second root is in the first layer too
    expect(b!.x).toBe(16 + 100 + 50);
    expect(c!.x).toBe(b!.x);
    expect(d!.x).toBe(16 + 2 * 150);
    // Siblings do not overlap, and the parent sits between its children.
    expect(Math.abs(b!.y - c!.y)).toBeGreaterThanOrEqual(30 + 10);
    expect(a!.y).toBeGreaterThan(Math.min(b!.y, c!.y));
    expect(a!.y).toBeLessThan(Math.max(b!.y, c!.y));
    // Every box lies inside the drawing, margins included.
    for (const n of l.nodes.values()) {
      expect(n.y).toBeGreaterThanOrEqual(16);
      expect(n.y + n.height).toBeLessThanOrEqual(l.height - 16 + 1e-9);
      expect(n.x + n.width).toBeLessThanOrEqual(l.width - 16 + 1e-9);
    }
    // An edge runs from the parent's right side to the child's left side.
    const cd = l.edges.get('cd')!;
    expect(cd[0]).toEqual({ x: c!.x + 100, y: c!.y + 15 });
    expect(cd[cd.length - 1]).toEqual({ x: d!.x, y: d!.y + 15 });

    const dag = layoutDag(['a', 'b', 'c'].map(box), [
      { id: '1', from: 'a', to: 'b' },
      { id: '2', from: 'b', to: 'c' },
      { id: '3', from: 'a', to: 'c' },
    ], opts);
    expect(dag.engine).toBe('dagre');
    expect(dag.nodes.get('c')!.x).toBeGreaterThan(dag.nodes.get('b')!.x);
    expect(layoutDag(['a', 'b'].map(box), [{ id: '1', from: 'a', to: 'b' }]).engine).toBe('dagre');
  });

  it('never overlaps boxes or crosses edges in a large random forest', () => {
    let seed = 3;
    const rnd = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
    const n = 800;
    const nodes = Array.from({ length: n }, (_, i) => box(`n${i}`));
    const parent = new Map<number, number>();
    const edges = [];
    for (let i = 1; i < n; i++) {
      if (rnd() < 0.05) continue; // a new tree
      const p = rnd() < 0.5 ? Math.floor(rnd() * i) : Math.max(0, i - 1 - Math.floor(rnd() * 5));
      parent.set(i, p);
      edges.push({ id: `e${i}`, from: `n${p}`, to: `n${i}` });
    }
    const l = layoutDag(nodes, edges, opts);
    expect(l.engine).toBe('tree');
    expect(l.nodes.size).toBe(n);
    const byLayer = new Map<number, number[]>();
    for (let i = 0; i < n; i++) {
      const b = l.nodes.get(`n${i}`)!;
      byLayer.set(b.x, [...(byLayer.get(b.x) ?? []), i]);
    }
    const y = (i: number) => l.nodes.get(`n${i}`)!.y;
    for (const layer of byLayer.values()) {
      layer.sort((a, b) => y(a) - y(b));
      for (let k = 1; k < layer.length; k++) {
        expect(y(layer[k]!) - y(layer[k - 1]!)).toBeGreaterThanOrEqual(30 + 10 - 1e-9);
        const pa = parent.get(layer[k - 1]!);
        const pb = parent.get(layer[k]!);
        if (pa !== undefined && pb !== undefined) expect(y(pb)).toBeGreaterThanOrEqual(y(pa));
      }
    }
  });
});
