// A task run's plan as a graph: one node per step with its state, one edge
// per dependency. The structure (ids and dependencies) decides the layout;
// states change every few hundred milliseconds and never re-run it.
import type { RunState, StepState } from '../bridge/types';
import { type Layout, layoutDag } from './layout';

export interface StepNode {
  id: string;
  label: string;
  /** The tool, or "coder" for a coder step. */
  tool: string;
  state: StepState;
  attempts: number;
  score?: number;
  /** The user said no to it (its state is failed). */
  denied?: boolean;
}

export interface RunGraphModel {
  nodes: StepNode[];
  edges: { id: string; from: string; to: string }[];
  /** Changes only when steps or dependencies change: the layout's cache key. */
  structure: string;
}

export const STEP_W = 176;
export const STEP_H = 46;

/** buildRunGraph turns a run's folded state into nodes and edges, in plan order. */
export function buildRunGraph(state: RunState | null | undefined): RunGraphModel {
  const nodes: StepNode[] = [];
  const edges: RunGraphModel['edges'] = [];
  const parts: string[] = [];
  for (const n of state?.graph?.nodes ?? []) {
    const rec = state?.steps[n.id];
    const node: StepNode = {
      id: n.id,
      label: n.title || n.id,
      tool: n.kind === 'coder' ? 'coder' : (n.tool ?? n.kind),
      state: rec?.state ?? 'pending',
      attempts: rec?.attempts ?? 0,
    };
    // A heuristic check without a critic model is not a score: the graph shows none.
    if (rec?.critique && rec.critique.source !== 'heuristic') node.score = rec.critique.score;
    if (rec?.denied) node.denied = true;
    nodes.push(node);
    for (const d of n.depends_on ?? []) edges.push({ id: `${d}\u2192${n.id}`, from: d, to: n.id });
    parts.push(`${n.id}<${(n.depends_on ?? []).join(',')}`);
  }
  return { nodes, edges, structure: parts.join(';') };
}

/** layoutRunGraph places the steps left to right. */
export function layoutRunGraph(m: RunGraphModel): Layout {
  return layoutDag(
    m.nodes.map((n) => ({ id: n.id, width: STEP_W, height: STEP_H })),
    m.edges,
    { ranksep: 40, nodesep: 14 },
  );
}

/** stepCounts counts steps by state. */
export function stepCounts(m: RunGraphModel): Partial<Record<StepState, number>> {
  const out: Partial<Record<StepState, number>> = {};
  for (const n of m.nodes) out[n.state] = (out[n.state] ?? 0) + 1;
  return out;
}
