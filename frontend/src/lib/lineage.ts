// The lineage explorer's model: worlds and forks as a graph, laid out once,
// with the questions the screen asks of it (subtrees to collapse, search).
// Selection, collapse and search never touch the layout.
import type { Domain, Lineage, LineageOutline, RunStatus } from '../bridge/types';
import { type WorldRunState, worldRunState } from './format';
import { compact } from './json';
import { type Layout, type LayoutEdge, type LayoutNode, type LayoutOptions, layoutDag } from './layout';

/** WorldNode is one world as the explorer draws it. */
export interface WorldNode {
  id: string;
  name: string;
  domain: Domain;
  /** The latest run's status; absent for a world without runs. */
  status?: RunStatus;
  /** The latest run, which "open" and "compare" use. */
  runId?: string;
  runs: number;
  parent?: string;
  createdAt: string;
  /** For a branch of a deliberation, its round (the server's backend.BranchRound: the greatest deliberation index of its runs). */
  round?: number;
  /** A batch of steps is being computed for the latest run (see worldRunState). */
  stepping?: boolean;
}

/** nodeState is a world's state as the lineage says it: "idle" for an open simulated run no batch moves, else its run's status. */
export function nodeState(n: WorldNode): WorldRunState | undefined {
  return n.status ? worldRunState({ status: n.status, stepping: n.stepping }, n.domain) : undefined;
}

/** ForkEdge is a fork, parent → child, labelled by its divergence. */
export interface ForkEdge {
  id: string;
  from: string;
  to: string;
  label: string;
  /** The parent's world-local time at the fork. */
  at: number;
  /** What the fork changed, in brief (its delta as compact JSON), when it changed something. */
  change?: string;
  /** The seed policy when it is not inherit. */
  seed?: string;
}

/** divergenceText says what a fork changed, in one line: its kind, the change, the seed policy and where. */
export function divergenceText(e: ForkEdge): string {
  return [e.label, e.change, e.seed ? `seed ${e.seed}` : undefined, `at t=${e.at}`].filter(Boolean).join(' · ');
}

export interface LineageModel {
  nodes: readonly WorldNode[];
  byId: ReadonlyMap<string, WorldNode>;
  edges: readonly ForkEdge[];
  children: ReadonlyMap<string, readonly string[]>;
}

/** Node size in the layout, in pixels. */
export const NODE_W = 184;
export const NODE_H = 42;

/** buildLineage turns the backend's lineage into the explorer's model. */
export function buildLineage(l: Lineage): LineageModel {
  const nodes: WorldNode[] = l.nodes.map((n) => {
    const w: WorldNode = { id: n.world.id, name: n.world.name, domain: n.world.domain, runs: n.runs, createdAt: n.world.createdAt };
    if (n.latestRun) {
      w.status = n.latestRun.status;
      w.runId = n.latestRun.id;
    }
    if (n.world.parentWorldId) w.parent = n.world.parentWorldId;
    return w;
  });
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const edges: ForkEdge[] = [];
  const children = new Map<string, string[]>();
  for (const e of l.edges) {
    const { parentWorldId: from, childWorldId: to } = e.fork;
    if (!byId.has(from) || !byId.has(to)) continue;
    const edge: ForkEdge = { id: e.fork.id, from, to, label: e.fork.divergence, at: e.at };
    const change = e.fork.delta === undefined ? '' : compact(e.fork.delta, 60);
    if (change !== '' && change !== '{}' && change !== 'null') edge.change = change;
    if (e.fork.seedPolicy && e.fork.seedPolicy !== 'inherit') edge.seed = e.fork.seedPolicy;
    edges.push(edge);
    const kids = children.get(from) ?? [];
    kids.push(to);
    children.set(from, kids);
  }
  return { nodes, byId, edges, children };
}

/** buildLineageOutline turns the backend's lineage outline into the explorer's model, as buildLineage does the full lineage. */
export function buildLineageOutline(o: LineageOutline): LineageModel {
  const nodes: WorldNode[] = o.worlds.map((x) => {
    const w: WorldNode = { id: x.id, name: x.name, domain: x.domain, runs: x.runs, createdAt: x.createdAt };
    if (x.status && x.runId) {
      w.status = x.status;
      w.runId = x.runId;
    }
    if (x.parent) w.parent = x.parent;
    if (x.round) w.round = x.round;
    if (x.stepping) w.stepping = true;
    return w;
  });
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const edges: ForkEdge[] = [];
  const children = new Map<string, string[]>();
  for (const f of o.forks) {
    if (!byId.has(f.from) || !byId.has(f.to)) continue;
    const edge: ForkEdge = { id: f.id, from: f.from, to: f.to, label: f.divergence, at: f.at };
    if (f.change) edge.change = f.change;
    if (f.seed) edge.seed = f.seed;
    edges.push(edge);
    const kids = children.get(f.from) ?? [];
    kids.push(f.to);
    children.set(f.from, kids);
  }
  return { nodes, byId, edges, children };
}

/**
 * layoutInput is what the lineage's layout needs, as plain data (it may go
 * to a worker): every world but those hidden in folded subtrees, which
 * take no room (a folded search of 20,000 branches lays out as its line).
 */
export function layoutInput(m: LineageModel, hidden: ReadonlySet<string> = new Set()): { nodes: LayoutNode[]; edges: LayoutEdge[]; options: LayoutOptions } {
  return {
    nodes: m.nodes.filter((n) => !hidden.has(n.id)).map((n) => ({ id: n.id, width: NODE_W, height: NODE_H })),
    edges: m.edges.filter((e) => !hidden.has(e.from) && !hidden.has(e.to)).map((e) => ({ id: e.id, from: e.from, to: e.to })),
    // A fork lineage is a forest: tidy trees, with dagre for anything else.
    options: { ranksep: 110, nodesep: 10, forests: 'tree' },
  };
}

/** layoutLineage lays the whole lineage out, left to right. */
export function layoutLineage(m: LineageModel): Layout {
  const { nodes, edges, options } = layoutInput(m);
  return layoutDag(nodes, edges, options);
}

/** descendants lists every world forked, directly or not, from id. */
export function descendants(m: LineageModel, id: string): string[] {
  const out: string[] = [];
  const seen = new Set([id]);
  const stack = [...(m.children.get(id) ?? [])];
  while (stack.length > 0) {
    const v = stack.pop()!;
    if (seen.has(v)) continue;
    seen.add(v);
    out.push(v);
    stack.push(...(m.children.get(v) ?? []));
  }
  return out;
}

/** hiddenBy is the set of worlds inside collapsed subtrees (the collapsed worlds themselves stay). */
export function hiddenBy(m: LineageModel, collapsed: ReadonlySet<string>): Set<string> {
  const hidden = new Set<string>();
  for (const id of collapsed) {
    if (hidden.has(id)) continue;
    for (const d of descendants(m, id)) hidden.add(d);
  }
  return hidden;
}

/**
 * searchLineage finds worlds whose id, name or latest run id contains the
 * query (case-insensitive), exact id matches first.
 */
export function searchLineage(m: LineageModel, query: string): string[] {
  const q = query.trim().toLowerCase();
  if (q === '') return [];
  const exact: string[] = [];
  const partial: string[] = [];
  for (const n of m.nodes) {
    const id = n.id.toLowerCase();
    const run = n.runId?.toLowerCase() ?? '';
    if (id === q || run === q) exact.push(n.id);
    else if (id.includes(q) || run.includes(q) || n.name.toLowerCase().includes(q)) partial.push(n.id);
  }
  return [...exact, ...partial];
}

/** MatchReason says where a search text was found in a world: the field, its text and where in it. */
export interface MatchReason {
  field: 'name' | 'world id' | 'run id';
  text: string;
  start: number;
  end: number;
}

/**
 * matchReason says why searchLineage found n for query: the first of its
 * name, world id and latest run's id that holds the text (case ignored).
 */
export function matchReason(n: WorldNode, query: string): MatchReason | undefined {
  const q = query.trim().toLowerCase();
  if (q === '') return undefined;
  const fields: [MatchReason['field'], string | undefined][] = [
    ['name', n.name],
    ['world id', n.id],
    ['run id', n.runId],
  ];
  for (const [field, text] of fields) {
    const at = text?.toLowerCase().indexOf(q) ?? -1;
    if (text !== undefined && at >= 0) return { field, text, start: at, end: at + q.length };
  }
  return undefined;
}

/** ancestors lists the worlds from id's parent up to its root. */
export function ancestors(m: LineageModel, id: string): string[] {
  const out: string[] = [];
  const seen = new Set([id]);
  let p = m.byId.get(id)?.parent;
  while (p !== undefined && !seen.has(p) && m.byId.has(p)) {
    out.push(p);
    seen.add(p);
    p = m.byId.get(p)?.parent;
  }
  return out;
}

/** toggleSelection keeps at most two selected worlds: the last two clicked. */
export function toggleSelection(selected: readonly string[], id: string, additive: boolean): string[] {
  if (!additive) return selected.length === 1 && selected[0] === id ? [] : [id];
  if (selected.includes(id)) return selected.filter((s) => s !== id);
  return [...selected, id].slice(-2);
}

/** The arrow keys that move between worlds in the lineage. */
export type LineageArrow = 'ArrowLeft' | 'ArrowRight' | 'ArrowUp' | 'ArrowDown';

/**
 * neighbour is the world an arrow key moves to from id, as the lineage is
 * drawn left to right: Left its parent, Right its first child, Up and Down
 * the sibling before and after it (roots are each other's siblings).
 * Hidden worlds (inside a folded subtree) are skipped; undefined when there
 * is nowhere to go.
 */
export function neighbour(m: LineageModel, hidden: ReadonlySet<string>, id: string, key: LineageArrow): string | undefined {
  const n = m.byId.get(id);
  if (!n) return undefined;
  const shown = (w: string | undefined) => w !== undefined && m.byId.has(w) && !hidden.has(w);
  switch (key) {
    case 'ArrowLeft':
      return shown(n.parent) ? n.parent : undefined;
    case 'ArrowRight':
      return (m.children.get(id) ?? []).find((c) => shown(c));
    default: {
      const parent = n.parent !== undefined && m.byId.has(n.parent) ? n.parent : undefined;
      const row = (parent !== undefined ? (m.children.get(parent) ?? []) : m.nodes.filter((w) => w.parent === undefined || !m.byId.has(w.parent)).map((w) => w.id)).filter(
        (w) => shown(w),
      );
      const i = row.indexOf(id);
      const j = key === 'ArrowUp' ? i - 1 : i + 1;
      return i >= 0 && j >= 0 && j < row.length ? row[j] : undefined;
    }
  }
}
