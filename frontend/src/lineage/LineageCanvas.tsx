import { memo, useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from 'react';
import type { Layout } from '../lib/layout';
import { midpoint, pathOf } from '../lib/layout';
import { type LineageArrow, type LineageModel, type WorldNode, divergenceText, neighbour, nodeState } from '../lib/lineage';
import { truncate } from '../lib/payload';
import { EMPTY_OVERLAY, SCORE_TONES, type SearchOverlay } from '../lib/deliberationTree';
import { type Size, type View, boundsOf, centerOn, cull, fitView, hitTest, intersects, toWorld, visibleRect, zoomAt } from '../lib/viewport';
import { drawFrame, edgePaths, paletteOf } from './draw';
import { theme } from '../ui/theme';
import './lineage.css';

interface LineageCanvasProps {
  model: LineageModel;
  layout: Layout;
  selected: readonly string[];
  matches: ReadonlySet<string>;
  hidden: ReadonlySet<string>;
  /** Collapsed worlds and how many worlds each hides. */
  collapsed: ReadonlyMap<string, number>;
  /** Deliberations' scores and chosen lines (none by default). */
  overlay?: SearchOverlay;
  /** A world to bring into view (search, or a world named in the address). */
  focus?: string | undefined;
  focusTick?: number;
  onSelect: (id: string, additive: boolean) => void;
  onOpen: (id: string) => void;
}

// jsdom and a window that is not laid out yet report a 0×0 box.
const FALLBACK: Size = { width: 1200, height: 700 };
const LABEL_ZOOM = 0.45;
/** How much of a fork's change fits under its edge (the gap between ranks is 110 px). */
const EDGE_CHANGE_CHARS = 16;

/** Up to this many worlds in view are drawn in the DOM (focusable, labelled); more go to the canvas. */
export const DOM_NODES_MAX = 300;

/** canvasAvailable reports whether this page can draw paths on a canvas (jsdom cannot). */
const canvasAvailable = () => typeof Path2D !== 'undefined' && typeof HTMLCanvasElement !== 'undefined';

/**
 * LineageCanvas draws the laid-out lineage with pan and zoom. The forks, and
 * the worlds when more than DOM_NODES_MAX are in view, are painted on a
 * canvas from paths built once per layout; the worlds in view otherwise are
 * SVG buttons with their text. Only what is inside the view is drawn, so
 * 5,000 worlds stay smooth; below a zoom level worlds lose their text.
 */
export function LineageCanvas(props: LineageCanvasProps) {
  const { model, layout, selected, matches, hidden, collapsed, focus, focusTick, onSelect, onOpen } = props;
  const overlay = props.overlay ?? EMPTY_OVERLAY;
  const host = useRef<HTMLDivElement>(null);
  const [size, setSize] = useState<Size>(FALLBACK);
  const [view, setView] = useState<View>({ x: 0, y: 0, k: 1 });
  const drag = useRef<{ x: number; y: number; vx: number; vy: number; moved: boolean } | null>(null);
  // Whether the last press moved the view: a pan's release is not a click.
  const dragged = useRef({ moved: false });
  const canvas = useRef<HTMLCanvasElement>(null);
  const [canvasOk] = useState(canvasAvailable);

  useLayoutEffect(() => {
    const el = host.current;
    if (!el) return;
    const measure = () => {
      const r = el.getBoundingClientRect();
      setSize(r.width > 0 && r.height > 0 ? { width: r.width, height: r.height } : FALLBACK);
    };
    measure();
    if (typeof ResizeObserver === 'undefined') return;
    const ro = new ResizeObserver(measure);
    ro.observe(el);
    return () => ro.disconnect();
  }, []);

  const fitted = useRef(false);
  const fit = useCallback(() => {
    fitted.current = true;
    setView(fitView({ width: layout.width, height: layout.height }, size));
  }, [layout, size]);

  // A new layout starts fitted, and stays fitted as the window is sized
  // until the user pans, zooms or focuses a world.
  const touched = useRef(false);
  const fittedFor = useRef<Layout | null>(null);
  useEffect(() => {
    if (fittedFor.current !== layout) {
      fittedFor.current = layout;
      touched.current = false;
    }
    if (!touched.current) fit();
  }, [layout, fit]);

  useEffect(() => {
    if (!focus) return;
    const b = layout.nodes.get(focus);
    if (b) {
      touched.current = true;
      setView((v) => centerOn(v, b, size));
    }
    // focusTick re-centres on the same world when asked again.
  }, [focus, focusTick, layout, size]);

  // Edge boxes are computed once per layout, for culling.
  const edgeBoxes = useMemo(() => new Map([...layout.edges].map(([id, pts]) => [id, boundsOf(pts)])), [layout]);

  const rect = visibleRect(view, size, 150);
  const visibleNodes = cull(layout.nodes, rect, hidden);
  const labels = view.k >= LABEL_ZOOM;
  // The canvas draws the forks; without one (or for labels) the SVG does.
  const domNodes = !canvasOk || labels || visibleNodes.length <= DOM_NODES_MAX;
  const svgEdges = !canvasOk || labels;
  const visibleEdges = svgEdges
    ? model.edges.filter((e) => !hidden.has(e.to) && !hidden.has(e.from) && intersects(edgeBoxes.get(e.id) ?? { x: 0, y: 0, width: 0, height: 0 }, rect))
    : [];

  // The canvas takes its colours from the theme when it draws: a change of
  // theme (or of the system's, when following it) draws again.
  const [, setShown] = useState<string>();
  useEffect(() => theme().subscribe(setShown), []);

  const paths = useMemo(() => (canvasOk ? edgePaths(model, layout, hidden, overlay.chosen) : undefined), [canvasOk, model, layout, hidden, overlay]);
  const sel = useMemo(() => new Set(selected), [selected]);
  const marked = useRef<Layout | null>(null);
  useLayoutEffect(() => {
    const el = canvas.current;
    const ctx = el && paths ? el.getContext('2d') : null;
    if (ctx && el && paths) {
      const dpr = window.devicePixelRatio || 1;
      const w = Math.round(size.width * dpr);
      const h = Math.round(size.height * dpr);
      if (el.width !== w || el.height !== h) {
        el.width = w;
        el.height = h;
      }
      drawFrame(ctx, { model, layout, paths, view, size, dpr, palette: paletteOf(el), boxes: domNodes ? [] : visibleNodes, selected: sel, matches, overlay });
    }
    // The first fitted frame with worlds on screen, for the performance measurement (tests/perf).
    if (marked.current !== layout && fittedFor.current === layout && layout.nodes.size > 0 && fitted.current) {
      marked.current = layout;
      performance.mark('lineage:drawn', { detail: { worlds: layout.nodes.size, drawn: visibleNodes.length, engine: layout.engine } });
    }
  });

  // The wheel scrolls the lineage, as it scrolls a page; with Ctrl (or ⌘,
  // or a trackpad's pinch, which sends Ctrl) it zooms at the pointer.
  const onWheel = (e: React.WheelEvent) => {
    touched.current = true;
    const unit = e.deltaMode === 1 ? 16 : e.deltaMode === 2 ? size.height : 1; // lines, pages, pixels
    if (e.ctrlKey || e.metaKey) {
      const r = host.current?.getBoundingClientRect();
      const p = { x: e.clientX - (r?.left ?? 0), y: e.clientY - (r?.top ?? 0) };
      setView((v) => zoomAt(v, Math.exp(-e.deltaY * unit * 0.0015), p));
      return;
    }
    // Shift turns a vertical wheel sideways, as in a page.
    const dx = (e.shiftKey && e.deltaX === 0 ? e.deltaY : e.deltaX) * unit;
    const dy = (e.shiftKey && e.deltaX === 0 ? 0 : e.deltaY) * unit;
    setView((v) => ({ ...v, x: v.x - dx, y: v.y - dy }));
  };

  // The arrow keys move between worlds: the world moved to is selected,
  // brought into view when it is outside it, and focused.
  const [arrowed, setArrowed] = useState<{ id: string; tick: number }>();
  const onArrow = useCallback(
    (id: string, key: LineageArrow) => {
      const to = neighbour(model, hidden, id, key);
      if (!to) return;
      onSelect(to, false);
      setArrowed((a) => ({ id: to, tick: (a?.tick ?? 0) + 1 }));
    },
    [model, hidden, onSelect],
  );
  useEffect(() => {
    if (!arrowed) return;
    const b = layout.nodes.get(arrowed.id);
    if (b && !intersects(b, visibleRect(view, size, -20))) {
      touched.current = true;
      setView((v) => centerOn(v, b, size));
    }
    // The effect follows the arrow, not the view it moves.
  }, [arrowed, layout, size]);
  // The world moved to takes the focus once it is drawn, once per arrow.
  const focusedTick = useRef(0);
  useEffect(() => {
    if (!arrowed || focusedTick.current === arrowed.tick) return;
    const el = [...(host.current?.querySelectorAll<SVGGElement>('[data-world]') ?? [])].find((g) => g.dataset.world === arrowed.id);
    if (el) {
      focusedTick.current = arrowed.tick;
      el.focus();
    }
  });
  const onPointerDown = (e: React.PointerEvent) => {
    if (e.button !== 0) return;
    drag.current = { x: e.clientX, y: e.clientY, vx: view.x, vy: view.y, moved: false };
    dragged.current.moved = false;
  };
  const onPointerMove = (e: React.PointerEvent) => {
    const d = drag.current;
    if (!d) return;
    const dx = e.clientX - d.x;
    const dy = e.clientY - d.y;
    if (!d.moved && Math.hypot(dx, dy) < 3) return;
    d.moved = true;
    touched.current = true;
    setView((v) => ({ ...v, x: d.vx + dx, y: d.vy + dy }));
  };
  const onPointerUp = () => {
    if (drag.current) dragged.current.moved = drag.current.moved;
    drag.current = null;
  };

  const zoomBy = (f: number) => {
    touched.current = true;
    setView((v) => zoomAt(v, f, { x: size.width / 2, y: size.height / 2 }));
  };
  // Worlds painted on the canvas are clicked through the layout's boxes.
  const worldAt = (e: React.MouseEvent): string | undefined => {
    if (domNodes || (e.target as Element).closest?.('.world-node, .canvas-tools')) return undefined;
    const r = host.current?.getBoundingClientRect();
    return hitTest(layout.nodes, toWorld(view, { x: e.clientX - (r?.left ?? 0), y: e.clientY - (r?.top ?? 0) }), hidden);
  };
  const onCanvasClick = (e: React.MouseEvent) => {
    if (dragged.current.moved) return;
    const id = worldAt(e);
    if (id) onSelect(id, e.shiftKey || e.ctrlKey || e.metaKey);
  };
  const onCanvasDoubleClick = (e: React.MouseEvent) => {
    const id = worldAt(e);
    if (id) onOpen(id);
  };

  return (
    <div
      className="lineage-canvas"
      ref={host}
      onWheel={onWheel}
      onPointerDown={onPointerDown}
      onPointerMove={onPointerMove}
      onPointerUp={onPointerUp}
      onPointerLeave={onPointerUp}
      onClick={onCanvasClick}
      onDoubleClick={onCanvasDoubleClick}
    >
      {canvasOk && <canvas ref={canvas} className="lineage-paint" style={{ width: size.width, height: size.height }} aria-hidden="true" />}
      <svg width="100%" height="100%" role="group" aria-label="Lineage graph" className="lineage-overlay">
        <defs>
          <marker id="lin-arrow" viewBox="0 0 8 8" refX="7" refY="4" markerWidth="6" markerHeight="6" orient="auto">
            <path d="M0,0 L8,4 L0,8 z" className="edge-arrow" />
          </marker>
        </defs>
        <g transform={`translate(${view.x},${view.y}) scale(${view.k})`}>
          {visibleEdges.map((e) => {
            const pts = layout.edges.get(e.id);
            if (!pts) return null;
            const mid = labels ? labelPoint(pts) : undefined;
            return (
              <g key={e.id} className={`fork-edge${overlay.chosen.has(e.to) ? ' chosen' : ''}`}>
                {!canvasOk && <path d={pathOf(pts)} className="edge" markerEnd="url(#lin-arrow)" />}
                {mid && (
                  <text x={mid.x} y={mid.y - 5} textAnchor="middle" className="edge-label" data-testid="edge-label">
                    <title>{divergenceText(e)}</title>
                    {e.label}
                  </text>
                )}
                {mid && (e.change || e.seed) && (
                  // What the fork changed, under the edge (cut to the gap between ranks; whole in the tooltip).
                  <text x={mid.x} y={mid.y + 12} textAnchor="middle" className="edge-label edge-change" data-testid="edge-change">
                    <title>{divergenceText(e)}</title>
                    {truncate(e.change ?? `seed ${e.seed}`, EDGE_CHANGE_CHARS)}
                  </text>
                )}
              </g>
            );
          })}
          {(domNodes ? visibleNodes : []).map((id) => {
            const n = model.byId.get(id);
            const b = layout.nodes.get(id);
            if (!n || !b) return null;
            return (
              <WorldBox
                key={id}
                node={n}
                x={b.x}
                y={b.y}
                w={b.width}
                h={b.height}
                labels={labels}
                selected={sel.has(id)}
                match={matches.has(id)}
                collapsed={collapsed.get(id) ?? 0}
                tone={overlay.tone.get(id)}
                score={overlay.score.get(id)}
                chosen={overlay.chosen.has(id)}
                onSelect={onSelect}
                onOpen={onOpen}
                onArrow={onArrow}
                dragging={dragged}
              />
            );
          })}
        </g>
      </svg>
      <div className="canvas-tools">
        <button type="button" className="icon-button boxed" onClick={() => zoomBy(1.25)} aria-label="Zoom in">
          +
        </button>
        <button type="button" className="icon-button boxed" onClick={() => zoomBy(0.8)} aria-label="Zoom out">
          −
        </button>
        <button type="button" className="button small" onClick={fit}>
          Fit
        </button>
        <span className="muted small mono">
          {(view.k * 100).toFixed(view.k < 0.1 ? 1 : 0)}% · {visibleNodes.length} drawn
        </span>
      </div>
    </div>
  );
}

interface WorldBoxProps {
  node: WorldNode;
  x: number;
  y: number;
  w: number;
  h: number;
  labels: boolean;
  selected: boolean;
  match: boolean;
  collapsed: number;
  /** A deliberation branch's score tone (0 … SCORE_TONES-1) and score; undefined for other worlds. */
  tone: number | undefined;
  score: number | undefined;
  chosen: boolean;
  onSelect: (id: string, additive: boolean) => void;
  onOpen: (id: string) => void;
  onArrow: (id: string, key: LineageArrow) => void;
  dragging: React.RefObject<{ moved: boolean } | null>;
}

const ARROWS: readonly string[] = ['ArrowLeft', 'ArrowRight', 'ArrowUp', 'ArrowDown'];

const WorldBox = memo(function WorldBox({ node: n, x, y, w, h, labels, selected, match, collapsed, tone, score, chosen, onSelect, onOpen, onArrow, dragging }: WorldBoxProps) {
  const state = nodeState(n);
  const status = state?.key ?? 'none';
  const scored = score !== undefined ? `, score ${score}` : '';
  return (
    <g
      transform={`translate(${x},${y})`}
      className={`world-node domain-${n.domain} wstatus-${status}${selected ? ' selected' : ''}${match ? ' match' : ''}${chosen ? ' chosen' : ''}`}
      role="button"
      tabIndex={0}
      aria-pressed={selected}
      aria-label={`${n.name || n.id}, ${n.domain}, ${state?.label ?? 'no runs'}${scored}${chosen ? ', on the chosen line' : ''}`}
      data-world={n.id}
      onClick={(e) => {
        if (dragging.current?.moved) return;
        onSelect(n.id, e.shiftKey || e.ctrlKey || e.metaKey);
      }}
      onDoubleClick={() => onOpen(n.id)}
      onKeyDown={(e) => {
        if (e.key === 'Enter') onOpen(n.id);
        if (e.key === ' ') {
          e.preventDefault();
          onSelect(n.id, e.shiftKey);
        }
        if (ARROWS.includes(e.key)) {
          e.preventDefault();
          onArrow(n.id, e.key as LineageArrow);
        }
      }}
    >
      <rect width={w} height={h} rx={6} className="world-box" />
      <rect width={6} height={h} rx={2} className="world-status" />
      {tone !== undefined && (
        // The score is the bar's length as well as its colour.
        <rect x={6} y={h - 6} width={((w - 6) * (tone + 1)) / SCORE_TONES} height={6} className={`score-bar tone-${tone}`} data-tone={tone} />
      )}
      {labels && (
        <>
          <text x={14} y={17} className="world-title">
            {clip(n.name || n.id, 24)}
          </text>
          <text x={14} y={33} className="world-sub">
            {n.domain === 'real' ? 'task' : 'sim'} · {state?.label ?? 'no runs'}
          </text>
        </>
      )}
      {collapsed > 0 && (
        <g transform={`translate(${w - 4},${h / 2})`} className="collapsed-mark">
          <circle r={10} />
          <text y={4} textAnchor="middle">
            +{collapsed}
          </text>
        </g>
      )}
    </g>
  );
});

function clip(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n - 1)}…` : s;
}

/**
 * labelPoint is where a fork's label and change are written: in the gap
 * just before the child (half the rank gap from its edge), where sibling
 * forks are a node's height apart; at the midpoint they converge on the
 * parent and their texts would overlap.
 */
function labelPoint(pts: readonly { x: number; y: number }[]): { x: number; y: number } | undefined {
  const end = pts[pts.length - 1];
  if (!end || pts.length < 2) return midpoint(pts);
  return { x: end.x - 55, y: end.y };
}
