// Layered left-to-right layout of a DAG. A forest (every node has at most
// one parent, as fork lineages do) gets d3-hierarchy's tidy tree, which is
// linear in the nodes and never crosses edges; any other DAG gets dagre.
// Pure: the same graph in gives the same boxes out, and nothing here knows
// about React or selection, so a screen computes a layout once per graph and
// layers state on top.
import dagre, { type graphlib } from '@dagrejs/dagre';
import { type HierarchyPointNode, hierarchy, tree } from 'd3-hierarchy';

/** LayoutNode is a node to place, with its size in pixels. */
export interface LayoutNode {
  id: string;
  width: number;
  height: number;
}

/** LayoutEdge joins two node ids. */
export interface LayoutEdge {
  id: string;
  from: string;
  to: string;
}

export interface Point {
  x: number;
  y: number;
}

/** Box is a placed node; x and y are its top-left corner. */
export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** Layout is a placed graph. */
export interface Layout {
  nodes: ReadonlyMap<string, Box>;
  edges: ReadonlyMap<string, readonly Point[]>;
  width: number;
  height: number;
  /** How long the layout took, in milliseconds (for the lineage's status line). */
  ms: number;
  /** Which layout placed the graph: the tidy tree (a forest) or dagre (any DAG). */
  engine: 'tree' | 'dagre';
}

export interface LayoutOptions {
  rankdir?: 'LR' | 'TB';
  nodesep?: number;
  ranksep?: number;
  margin?: number;
  /**
   * Past this many nodes dagre keeps its first (depth-first) ordering instead
   * of sweeping for fewer crossings: on a fork forest that ordering already
   * has none, and the sweeps are the slow part.
   */
  fastOrderAbove?: number;
  /**
   * 'tree' lays a forest out as tidy trees (linear time, no crossings);
   * 'dagre' (the default) lays every graph out with dagre.
   */
  forests?: 'tree' | 'dagre';
}

type G = graphlib.Graph;

/**
 * depthRanker ranks every node by its longest path from a source. A fork
 * lineage is a forest, where this is exactly the depth and every edge is
 * tight, so dagre's network simplex (quadratic on deep trees) has nothing to
 * improve. It respects each edge's minlen, as dagre's own rankers do.
 */
export function depthRanker(g: G): void {
  const indegree = new Map<string, number>();
  for (const v of g.nodes()) indegree.set(v, g.inEdges(v)?.length ?? 0);
  const queue: string[] = [];
  for (const [v, d] of indegree) {
    if (d === 0) {
      g.node(v).rank = 0;
      queue.push(v);
    }
  }
  for (let i = 0; i < queue.length; i++) {
    const v = queue[i]!;
    const rank = (g.node(v).rank as number | undefined) ?? 0;
    for (const e of g.outEdges(v) ?? []) {
      const w = g.node(e.w);
      const want = rank + ((g.edge(e)?.minlen as number | undefined) ?? 1);
      if (w.rank === undefined || (w.rank as number) < want) w.rank = want;
      const left = (indegree.get(e.w) ?? 1) - 1;
      indegree.set(e.w, left);
      if (left === 0) queue.push(e.w);
    }
  }
  // dagre breaks cycles before ranking; a node left over is ranked anyway.
  for (const v of g.nodes()) if (g.node(v).rank === undefined) g.node(v).rank = 0;
}

/**
 * layoutDag places nodes in layers along rankdir (left to right by default):
 * with forests: 'tree', a forest as tidy trees; any other graph with dagre.
 */
export function layoutDag(nodes: readonly LayoutNode[], edges: readonly LayoutEdge[], opts: LayoutOptions = {}): Layout {
  if (opts.forests === 'tree' && (opts.rankdir ?? 'LR') === 'LR') {
    const forest = layoutForest(nodes, edges, opts);
    if (forest) return forest;
  }
  return layoutDagre(nodes, edges, opts);
}

/**
 * forestOf reads the graph as a forest: each node's children in edge order
 * and the roots in node order. It returns undefined when the graph is not
 * one (a node with two parents, or a cycle). Edges to unknown nodes and self
 * edges are skipped, as the layouts skip them.
 */
export function forestOf(
  nodes: readonly LayoutNode[],
  edges: readonly LayoutEdge[],
): { roots: string[]; children: Map<string, { node: string; edge: string }[]> } | undefined {
  const known = new Set(nodes.map((n) => n.id));
  const parent = new Map<string, string>();
  const children = new Map<string, { node: string; edge: string }[]>();
  for (const e of edges) {
    if (!known.has(e.from) || !known.has(e.to) || e.from === e.to) continue;
    if (parent.has(e.to)) return undefined;
    parent.set(e.to, e.from);
    const kids = children.get(e.from) ?? [];
    kids.push({ node: e.to, edge: e.id });
    children.set(e.from, kids);
  }
  const roots: string[] = [];
  const seen = new Set<string>();
  for (const n of nodes) {
    if (parent.has(n.id) || seen.has(n.id)) continue;
    seen.add(n.id);
    roots.push(n.id);
  }
  // Every node must hang below a root; one that does not sits on a cycle.
  let reached = 0;
  const stack = [...roots];
  while (stack.length > 0) {
    const v = stack.pop()!;
    reached++;
    for (const c of children.get(v) ?? []) stack.push(c.node);
  }
  return reached === known.size ? { roots, children } : undefined;
}

interface TreeDatum {
  id: string;
  edge?: string;
  kids: TreeDatum[];
}

/**
 * layoutForest lays a forest out left to right as tidy trees (Buchheim's
 * linear-time Reingold–Tilford, from d3-hierarchy): a node's depth is its
 * layer, siblings stack downwards, and no two edges cross. It returns
 * undefined when the graph is not a forest.
 */
export function layoutForest(nodes: readonly LayoutNode[], edges: readonly LayoutEdge[], opts: LayoutOptions = {}): Layout | undefined {
  const started = performance.now();
  const { nodesep = 12, ranksep = 48, margin = 16 } = opts;
  const forest = forestOf(nodes, edges);
  if (!forest) return undefined;
  const size = new Map<string, LayoutNode>();
  for (const n of nodes) if (!size.has(n.id)) size.set(n.id, n);

  // The trees hang from one invisible root, so one pass places them all.
  const datum = (id: string, edge?: string): TreeDatum => ({ id, ...(edge !== undefined ? { edge } : {}), kids: [] });
  const top: TreeDatum = { id: '', kids: forest.roots.map((r) => datum(r)) };
  const stack = [...top.kids];
  while (stack.length > 0) {
    const d = stack.pop()!;
    for (const c of forest.children.get(d.id) ?? []) {
      const k = datum(c.node, c.edge);
      d.kids.push(k);
      stack.push(k);
    }
  }
  let tallest = 0;
  for (const n of size.values()) tallest = Math.max(tallest, n.height);
  const root = tree<TreeDatum>()
    .nodeSize([tallest + nodesep, 1])
    .separation((a, b) => (a.parent === b.parent ? 1 : a.parent?.parent === b.parent?.parent ? 1.25 : 1.5))(hierarchy(top, (d) => d.kids));

  // Layers are as wide as their widest node.
  const widths: number[] = [];
  let minX = Infinity;
  let maxX = -Infinity;
  root.each((p) => {
    if (p.depth === 0) return;
    const n = size.get(p.data.id)!;
    widths[p.depth - 1] = Math.max(widths[p.depth - 1] ?? 0, n.width);
    minX = Math.min(minX, p.x - n.height / 2);
    maxX = Math.max(maxX, p.x + n.height / 2);
  });
  const left: number[] = [];
  let x = margin;
  for (const w of widths) {
    left.push(x);
    x += w + ranksep;
  }
  const width = widths.length === 0 ? 0 : x - ranksep + margin;
  const height = widths.length === 0 ? 0 : maxX - minX + 2 * margin;

  const placed = new Map<string, Box>();
  const paths = new Map<string, Point[]>();
  const boxOf = (p: HierarchyPointNode<TreeDatum>): Box => {
    const n = size.get(p.data.id)!;
    return { x: left[p.depth - 1]!, y: p.x - minX + margin - n.height / 2, width: n.width, height: n.height };
  };
  root.each((p) => {
    if (p.depth === 0) return;
    const b = boxOf(p);
    placed.set(p.data.id, b);
    if (p.data.edge === undefined || !p.parent || p.parent.depth === 0) return;
    const a = placed.get(p.parent.data.id)!;
    const from = { x: a.x + a.width, y: a.y + a.height / 2 };
    const to = { x: b.x, y: b.y + b.height / 2 };
    const bend = (to.x - from.x) / 2;
    paths.set(p.data.edge, [from, { x: from.x + bend, y: from.y }, { x: to.x - bend, y: to.y }, to]);
  });
  return { nodes: placed, edges: paths, width, height, ms: performance.now() - started, engine: 'tree' };
}

/** layoutDagre places any DAG in layers along rankdir with dagre. */
export function layoutDagre(nodes: readonly LayoutNode[], edges: readonly LayoutEdge[], opts: LayoutOptions = {}): Layout {
  const started = performance.now();
  const { rankdir = 'LR', nodesep = 12, ranksep = 48, margin = 16, fastOrderAbove = 400 } = opts;
  const g: G = new dagre.graphlib.Graph({ multigraph: true });
  g.setGraph({ rankdir, nodesep, ranksep, marginx: margin, marginy: margin, ranker: depthRanker });
  g.setDefaultEdgeLabel(() => ({}));
  const known = new Set<string>();
  for (const n of nodes) {
    if (known.has(n.id)) continue;
    known.add(n.id);
    g.setNode(n.id, { width: n.width, height: n.height });
  }
  for (const e of edges) {
    // An edge to a node that is not drawn (a world outside this page) is skipped, not invented.
    if (!known.has(e.from) || !known.has(e.to) || e.from === e.to) continue;
    g.setEdge(e.from, e.to, { minlen: 1 }, e.id);
  }
  dagre.layout(g, { disableOptimalOrderHeuristic: known.size > fastOrderAbove });

  const placed = new Map<string, Box>();
  for (const id of known) {
    const n = g.node(id);
    placed.set(id, { x: (n.x ?? 0) - n.width / 2, y: (n.y ?? 0) - n.height / 2, width: n.width, height: n.height });
  }
  const paths = new Map<string, Point[]>();
  for (const e of g.edges()) {
    const label = g.edge(e);
    if (e.name !== undefined) paths.set(e.name, ((label?.points ?? []) as Point[]).map((p) => ({ x: p.x, y: p.y })));
  }
  const graph = g.graph();
  return {
    nodes: placed,
    edges: paths,
    width: graph.width ?? 0,
    height: graph.height ?? 0,
    ms: performance.now() - started,
    engine: 'dagre',
  };
}

/** pathOf turns dagre's edge points into a smooth SVG path. */
export function pathOf(points: readonly Point[]): string {
  if (points.length === 0) return '';
  const [first, ...rest] = points;
  if (rest.length === 0) return `M${first!.x},${first!.y}`;
  if (rest.length === 1) return `M${first!.x},${first!.y}L${rest[0]!.x},${rest[0]!.y}`;
  // Quadratic segments through the midpoints: smooth, and through both ends.
  let d = `M${first!.x},${first!.y}`;
  for (let i = 0; i < rest.length - 1; i++) {
    const p = rest[i]!;
    const q = rest[i + 1]!;
    const mx = i === rest.length - 2 ? q.x : (p.x + q.x) / 2;
    const my = i === rest.length - 2 ? q.y : (p.y + q.y) / 2;
    d += `Q${p.x},${p.y} ${mx},${my}`;
  }
  return d;
}

/** midpoint is the point halfway along a polyline (where an edge label goes). */
export function midpoint(points: readonly Point[]): Point | undefined {
  if (points.length === 0) return undefined;
  let total = 0;
  for (let i = 1; i < points.length; i++) total += dist(points[i - 1]!, points[i]!);
  let left = total / 2;
  for (let i = 1; i < points.length; i++) {
    const a = points[i - 1]!;
    const b = points[i]!;
    const d = dist(a, b);
    if (d >= left && d > 0) {
      const t = left / d;
      return { x: a.x + (b.x - a.x) * t, y: a.y + (b.y - a.y) * t };
    }
    left -= d;
  }
  return points[points.length - 1];
}

function dist(a: Point, b: Point): number {
  return Math.hypot(b.x - a.x, b.y - a.y);
}
