import { describe, expect, it } from 'vitest';
import { runState } from '../test/fixtures';
import { buildRunGraph, layoutRunGraph, stepCounts } from './runGraph';

describe('buildRunGraph', () => {
  it('makes a node per step with its state, an edge per dependency', () => {
    const m = buildRunGraph(runState());
    expect(m.nodes.map((n) => [n.id, n.state])).toEqual([
      ['step-1', 'done'],
      ['step-2', 'awaiting_approval'],
      ['step-3', 'pending'],
    ]);
    expect(m.nodes[0]!.score, "the heuristic's check is not a score").toBeUndefined();
    const st = runState();
    st.steps['step-1']!.critique = { step: 'step-1', score: 0.8, explanation: 'fine', source: 'model', model: 'm' };
    expect(buildRunGraph(st).nodes[0]!.score).toBe(0.8);
    expect(m.edges.map((e) => [e.from, e.to])).toEqual([
      ['step-1', 'step-2'],
      ['step-2', 'step-3'],
    ]);
    expect(stepCounts(m)).toEqual({ done: 1, awaiting_approval: 1, pending: 1 });
  });

  it('keeps the structure key when only states change', () => {
    const a = buildRunGraph(runState());
    const s = runState();
    s.steps['step-3']!.state = 'running';
    const b = buildRunGraph(s);
    expect(b.structure).toBe(a.structure);
    s.graph!.nodes[2]!.depends_on = ['step-1'];
    expect(buildRunGraph(s).structure).not.toBe(a.structure);
  });

  it('is empty before a plan exists', () => {
    expect(buildRunGraph(null)).toEqual({ nodes: [], edges: [], structure: '' });
    expect(buildRunGraph(runState({ graph: undefined })).nodes).toEqual([]);
  });

  it('lays the steps out left to right', () => {
    const l = layoutRunGraph(buildRunGraph(runState()));
    expect(l.nodes.get('step-2')!.x).toBeGreaterThan(l.nodes.get('step-1')!.x);
    expect(l.nodes.get('step-3')!.x).toBeGreaterThan(l.nodes.get('step-2')!.x);
  });
});
