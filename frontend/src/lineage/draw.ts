// Draws the lineage on a canvas: every fork as one path, and, when there
// are too many worlds in view for the DOM, the worlds as plain boxes. The
// paths are built once per layout (and collapse state); a frame only sets
// the view's transform and fills, so panning 5,000 worlds stays smooth.
import { type Layout, type Point } from '../lib/layout';
import { type LineageModel, nodeState } from '../lib/lineage';
import { SCORE_TONES, type SearchOverlay } from '../lib/deliberationTree';

/** Palette is the theme's colours, read from the page's CSS variables. */
export interface Palette {
  edge: string;
  realFill: string;
  realStroke: string;
  localFill: string;
  localStroke: string;
  status: Record<string, string>;
  statusNone: string;
  selected: string;
  match: string;
  /** The score scale, lowest first (SCORE_TONES colours), and the chosen line's colour. */
  tones: string[];
  chosen: string;
}

/** paletteOf reads the colours the lineage's CSS uses, so the canvas follows the theme. */
export function paletteOf(el: Element): Palette {
  const css = getComputedStyle(el);
  const v = (name: string, fallback: string) => css.getPropertyValue(name).trim() || fallback;
  const running = v('--real', '#0b6b73');
  const orange = v('--duck-orange', '#e8710a');
  return {
    edge: v('--border-strong', '#cfcdc6'),
    realFill: v('--real-bg', '#dff3f3'),
    realStroke: running,
    localFill: v('--local-bg', '#eee8fb'),
    localStroke: v('--local', '#6a3fc8'),
    status: {
      running,
      completed: v('--ok', '#1f7a3d'),
      failed: v('--fail', '#b3261e'),
      awaiting_approval: orange,
      paused: orange,
    },
    statusNone: v('--text-3', '#8a8780'),
    selected: orange,
    match: v('--duck-yellow', '#f4b400'),
    tones: Array.from({ length: SCORE_TONES }, (_, i) => v(`--score-${i}`, ['#b2182b', '#b4500b', '#7f6a00', '#4d7c0f', '#17672b'][i]!)),
    chosen: v('--chosen-line', '#1d4ed8'),
  };
}

/** PathSink is the part of Path2D (and a canvas context) that traceEdge draws with. */
export interface PathSink {
  moveTo(x: number, y: number): void;
  lineTo(x: number, y: number): void;
  quadraticCurveTo(cx: number, cy: number, x: number, y: number): void;
}

/** traceEdge draws the same curve as pathOf (lib/layout) does in SVG. */
export function traceEdge(sink: PathSink, points: readonly Point[]): void {
  if (points.length < 2) return;
  const [first, ...rest] = points;
  sink.moveTo(first!.x, first!.y);
  if (rest.length === 1) {
    sink.lineTo(rest[0]!.x, rest[0]!.y);
    return;
  }
  for (let i = 0; i < rest.length - 1; i++) {
    const p = rest[i]!;
    const q = rest[i + 1]!;
    const last = i === rest.length - 2;
    sink.quadraticCurveTo(p.x, p.y, last ? q.x : (p.x + q.x) / 2, last ? q.y : (p.y + q.y) / 2);
  }
}

/** arrowHead is the triangle at an edge's end, pointing along its last segment. */
export function arrowHead(points: readonly Point[], size = 6): Point[] | undefined {
  if (points.length < 2) return undefined;
  const tip = points[points.length - 1]!;
  const from = points[points.length - 2]!;
  const len = Math.hypot(tip.x - from.x, tip.y - from.y);
  if (len === 0) return undefined;
  const ux = (tip.x - from.x) / len;
  const uy = (tip.y - from.y) / len;
  const bx = tip.x - ux * size;
  const by = tip.y - uy * size;
  const half = size / 2;
  return [tip, { x: bx - uy * half, y: by + ux * half }, { x: bx + uy * half, y: by - ux * half }];
}

/** EdgePaths are every visible fork's curve and arrow head, each as one path. */
export interface EdgePaths {
  curves: Path2D;
  arrows: Path2D;
  /** The forks into a deliberation's chosen line, drawn over the others. */
  chosen: Path2D;
}

/** edgePaths builds the forks' paths once per layout and collapse state. */
export function edgePaths(model: LineageModel, layout: Layout, hidden: ReadonlySet<string>, chosen: ReadonlySet<string> = new Set()): EdgePaths {
  const curves = new Path2D();
  const arrows = new Path2D();
  const onLine = new Path2D();
  for (const e of model.edges) {
    if (hidden.has(e.to) || hidden.has(e.from)) continue;
    const pts = layout.edges.get(e.id);
    if (!pts) continue;
    traceEdge(chosen.has(e.to) ? onLine : curves, pts);
    const head = arrowHead(pts);
    if (head) {
      arrows.moveTo(head[0]!.x, head[0]!.y);
      arrows.lineTo(head[1]!.x, head[1]!.y);
      arrows.lineTo(head[2]!.x, head[2]!.y);
      arrows.closePath();
    }
  }
  return { curves, arrows, chosen: onLine };
}

/** Frame is what one drawing of the canvas needs. */
export interface Frame {
  model: LineageModel;
  layout: Layout;
  paths: EdgePaths;
  view: { x: number; y: number; k: number };
  size: { width: number; height: number };
  dpr: number;
  palette: Palette;
  /** Worlds to draw as boxes (empty when the DOM draws them). */
  boxes: readonly string[];
  selected: ReadonlySet<string>;
  matches: ReadonlySet<string>;
  /** Deliberations' score tones and chosen lines. */
  overlay?: SearchOverlay;
}

/** drawFrame draws the forks and, when asked, the worlds' boxes. */
export function drawFrame(ctx: CanvasRenderingContext2D, f: Frame): void {
  const { view: v, dpr, palette: p } = f;
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, f.size.width, f.size.height);
  ctx.setTransform(dpr * v.k, 0, 0, dpr * v.k, dpr * v.x, dpr * v.y);
  // Never thinner than about a screen pixel, or a zoomed-out forest vanishes.
  ctx.lineWidth = Math.max(1.5, 0.8 / v.k);
  ctx.strokeStyle = p.edge;
  ctx.stroke(f.paths.curves);
  ctx.lineWidth = Math.max(3, 2 / v.k);
  ctx.strokeStyle = p.chosen;
  ctx.stroke(f.paths.chosen);
  ctx.lineWidth = Math.max(1.5, 0.8 / v.k);
  if (v.k >= 0.3) {
    ctx.fillStyle = p.edge;
    ctx.fill(f.paths.arrows);
  }
  if (f.boxes.length === 0) return;

  // One path per colour: a few fills instead of one per world.
  const real = new Path2D();
  const local = new Path2D();
  const bars = new Map<string, Path2D>();
  const outline = { selected: new Path2D(), match: new Path2D(), chosen: new Path2D() };
  const tones = Array.from({ length: SCORE_TONES }, () => new Path2D());
  for (const id of f.boxes) {
    const b = f.layout.nodes.get(id);
    const n = f.model.byId.get(id);
    if (!b || !n) continue;
    (n.domain === 'real' ? real : local).rect(b.x, b.y, b.width, b.height);
    const state = nodeState(n);
    const colour = (state && p.status[state.key]) || p.statusNone;
    let bar = bars.get(colour);
    if (!bar) bars.set(colour, (bar = new Path2D()));
    bar.rect(b.x, b.y, 6, b.height);
    const tone = f.overlay?.tone.get(id);
    if (tone !== undefined) tones[tone]?.rect(b.x + 6, b.y + b.height - 6, ((b.width - 6) * (tone + 1)) / SCORE_TONES, 6);
    if (f.selected.has(id)) outline.selected.rect(b.x, b.y, b.width, b.height);
    else if (f.matches.has(id)) outline.match.rect(b.x, b.y, b.width, b.height);
    else if (f.overlay?.chosen.has(id)) outline.chosen.rect(b.x, b.y, b.width, b.height);
  }
  ctx.fillStyle = p.realFill;
  ctx.fill(real);
  ctx.fillStyle = p.localFill;
  ctx.fill(local);
  if (v.k >= 0.1) {
    ctx.lineWidth = 1 / v.k;
    ctx.strokeStyle = p.realStroke;
    ctx.stroke(real);
    ctx.strokeStyle = p.localStroke;
    ctx.stroke(local);
  }
  for (const [colour, bar] of bars) {
    ctx.fillStyle = colour;
    ctx.fill(bar);
  }
  tones.forEach((path, i) => {
    ctx.fillStyle = p.tones[i]!;
    ctx.fill(path);
  });
  ctx.lineWidth = Math.max(3, 2.5 / v.k);
  ctx.strokeStyle = p.chosen;
  ctx.stroke(outline.chosen);
  ctx.strokeStyle = p.match;
  ctx.stroke(outline.match);
  ctx.strokeStyle = p.selected;
  ctx.stroke(outline.selected);
}
