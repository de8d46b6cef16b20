import { describe, expect, it } from 'vitest';
import { lineage } from '../test/fixtures';
import type { Lineage } from '../bridge/types';
import { ancestors, buildLineage, buildLineageOutline, descendants, hiddenBy, layoutLineage, neighbour, searchLineage, toggleSelection } from './lineage';

function chain(n: number): Lineage {
  const base = lineage();
  const spec = base.nodes[0]!.world;
  const nodes = Array.from({ length: n }, (_, i) => ({
    world: { ...spec, id: `w${i}`, name: `world ${i}`, ...(i > 0 ? { parentWorldId: `w${i - 1}` } : {}) },
    runs: 0,
  }));
  const edges = nodes.slice(1).map((_, i) => ({
    fork: { ...base.edges[0]!.fork, id: `f${i + 1}`, parentWorldId: `w${i}`, childWorldId: `w${i + 1}` },
    at: i,
  }));
  return { nodes, edges };
}

describe('buildLineage', () => {
  it('keeps worlds, latest runs and forks labelled by divergence', () => {
    const m = buildLineage(lineage());
    expect(m.nodes.map((n) => n.id)).toEqual(['wld_root', 'wld_a', 'wld_b']);
    expect(m.byId.get('wld_a')).toMatchObject({ status: 'running', runId: 'run_a', parent: 'wld_root', domain: 'simulated' });
    expect(m.edges).toEqual([
      { id: 'frk_a', from: 'wld_root', to: 'wld_a', label: 'parameter_change', at: 3 },
      { id: 'frk_b', from: 'wld_root', to: 'wld_b', label: 'state_patch', at: 3 },
    ]);
    expect(m.children.get('wld_root')).toEqual(['wld_a', 'wld_b']);
  });

  it('drops forks whose worlds are missing', () => {
    const l = lineage();
    l.nodes.pop();
    expect(buildLineage(l).edges.map((e) => e.to)).toEqual(['wld_a']);
  });
});

describe('buildLineageOutline', () => {
  it('builds the same model from the outline as from the full lineage', () => {
    const l = lineage();
    const outline = {
      worlds: l.nodes.map((n) => ({
        id: n.world.id,
        name: n.world.name,
        domain: n.world.domain,
        createdAt: n.world.createdAt,
        runs: n.runs,
        ...(n.world.parentWorldId ? { parent: n.world.parentWorldId } : {}),
        ...(n.latestRun ? { runId: n.latestRun.id, status: n.latestRun.status } : {}),
      })),
      forks: [...l.edges.map((e) => ({ id: e.fork.id, from: e.fork.parentWorldId, to: e.fork.childWorldId, divergence: e.fork.divergence, at: e.at })),
        { id: 'frk_lost', from: 'wld_root', to: 'wld_gone', divergence: 'state_patch' as const, at: 0 }],
    };
    const a = buildLineage(l);
    const b = buildLineageOutline(outline);
    expect(b.nodes).toEqual(a.nodes);
    expect(b.edges).toEqual(a.edges);
    expect(b.children).toEqual(a.children);
  });
});

describe('subtrees', () => {
  const m = buildLineage(chain(5));

  it('finds descendants and ancestors', () => {
    expect(descendants(m, 'w2').sort()).toEqual(['w3', 'w4']);
    expect(descendants(m, 'w4')).toEqual([]);
    expect(ancestors(m, 'w3')).toEqual(['w2', 'w1', 'w0']);
  });

  it('hides what a collapsed world holds, not the world', () => {
    expect([...hiddenBy(m, new Set(['w2']))].sort()).toEqual(['w3', 'w4']);
    expect([...hiddenBy(m, new Set(['w1', 'w3']))].sort()).toEqual(['w2', 'w3', 'w4']);
    expect(hiddenBy(m, new Set()).size).toBe(0);
  });
});

describe('searchLineage', () => {
  const m = buildLineage(lineage());
  it('matches ids, run ids and names, exact first', () => {
    expect(searchLineage(m, 'noisy')).toEqual(['wld_a']);
    expect(searchLineage(m, 'RUN_B')).toEqual(['wld_b']);
    expect(searchLineage(m, 'wld_')).toEqual(['wld_root', 'wld_a', 'wld_b']);
    expect(searchLineage(m, 'wld_a')).toEqual(['wld_a']);
    expect(searchLineage(m, '  ')).toEqual([]);
  });
});

describe('toggleSelection', () => {
  it('selects one, or up to two additively', () => {
    expect(toggleSelection([], 'a', false)).toEqual(['a']);
    expect(toggleSelection(['a'], 'a', false)).toEqual([]);
    expect(toggleSelection(['a'], 'b', false)).toEqual(['b']);
    expect(toggleSelection(['a'], 'b', true)).toEqual(['a', 'b']);
    expect(toggleSelection(['a', 'b'], 'c', true)).toEqual(['b', 'c']);
    expect(toggleSelection(['a', 'b'], 'a', true)).toEqual(['b']);
  });
});

describe('layoutLineage', () => {
  it('puts children right of their parent', () => {
    const m = buildLineage(lineage());
    const l = layoutLineage(m);
    expect(l.nodes.get('wld_a')!.x).toBeGreaterThan(l.nodes.get('wld_root')!.x);
    expect(l.edges.get('frk_a')).toBeDefined();
  });
});

describe('neighbour', () => {
  // w0 → w1 → w2, and w0 → w3: w1 and w3 are siblings.
  function tree(): Lineage {
    const l = chain(3);
    const base = l.nodes[0]!.world;
    l.nodes.push({ world: { ...base, id: 'w3', name: 'world 3', parentWorldId: 'w0' }, runs: 0 });
    l.edges.push({ fork: { ...l.edges[0]!.fork, id: 'f3', parentWorldId: 'w0', childWorldId: 'w3' }, at: 3 });
    return l;
  }

  it('moves to the parent, the first child and the siblings, as the lineage is drawn', () => {
    const m = buildLineage(tree());
    const none = new Set<string>();
    expect(neighbour(m, none, 'w1', 'ArrowLeft')).toBe('w0');
    expect(neighbour(m, none, 'w0', 'ArrowLeft')).toBeUndefined();
    expect(neighbour(m, none, 'w0', 'ArrowRight')).toBe('w1');
    expect(neighbour(m, none, 'w2', 'ArrowRight')).toBeUndefined();
    expect(neighbour(m, none, 'w1', 'ArrowDown')).toBe('w3');
    expect(neighbour(m, none, 'w3', 'ArrowUp')).toBe('w1');
    expect(neighbour(m, none, 'w3', 'ArrowDown')).toBeUndefined();
    expect(neighbour(m, none, 'nope', 'ArrowLeft')).toBeUndefined();
  });

  it('skips the worlds a fold hides', () => {
    const m = buildLineage(tree());
    expect(neighbour(m, new Set(['w1', 'w2']), 'w0', 'ArrowRight')).toBe('w3');
    expect(neighbour(m, new Set(['w1']), 'w3', 'ArrowUp')).toBeUndefined();
  });
});
