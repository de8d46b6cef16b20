import { memo, useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from 'react';
import type { Layout } from '../lib/layout';
import { midpoint, pathOf } from '../lib/layout';
import type { LineageModel, WorldNode } from '../lib/lineage';
import { type Size, type View, boundsOf, centerOn, cull, fitView, intersects, visibleRect, zoomAt } from '../lib/viewport';
import { runStatusLabel } from '../lib/format';

interface LineageCanvasProps {
  model: LineageModel;
  layout: Layout;
  selected: readonly string[];
  matches: ReadonlySet<string>;
  hidden: ReadonlySet<string>;
  /** Collapsed worlds and how many worlds each hides. */
  collapsed: ReadonlyMap<string, number>;
  /** A world to bring into view (search, or a world named in the address). */
  focus?: string | undefined;
  focusTick?: number;
  onSelect: (id: string, additive: boolean) => void;
  onOpen: (id: string) => void;
}

// jsdom and a window that is not laid out yet report a 0×0 box.
const FALLBACK: Size = { width: 1200, height: 700 };
const LABEL_ZOOM = 0.45;

/**
 * LineageCanvas draws the laid-out lineage as SVG with pan and zoom. Only the
 * worlds and forks inside the view are in the DOM, so 5,000 worlds stay
 * smooth; below a zoom level nodes lose their text.
 */
export function LineageCanvas(props: LineageCanvasProps) {
  const { model, layout, selected, matches, hidden, collapsed, focus, focusTick, onSelect, onOpen } = props;
  const host = useRef<HTMLDivElement>(null);
  const [size, setSize] = useState<Size>(FALLBACK);
  const [view, setView] = useState<View>({ x: 0, y: 0, k: 1 });
  const drag = useRef<{ x: number; y: number; vx: number; vy: number; moved: boolean } | null>(null);

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

  const fit = useCallback(() => setView(fitView({ width: layout.width, height: layout.height }, size)), [layout, size]);

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
  const visibleEdges = model.edges.filter((e) => !hidden.has(e.to) && !hidden.has(e.from) && intersects(edgeBoxes.get(e.id) ?? { x: 0, y: 0, width: 0, height: 0 }, rect));

  const onWheel = (e: React.WheelEvent) => {
    const r = host.current?.getBoundingClientRect();
    const p = { x: e.clientX - (r?.left ?? 0), y: e.clientY - (r?.top ?? 0) };
    touched.current = true;
    setView((v) => zoomAt(v, Math.exp(-e.deltaY * 0.0015), p));
  };
  const onPointerDown = (e: React.PointerEvent) => {
    if (e.button !== 0) return;
    drag.current = { x: e.clientX, y: e.clientY, vx: view.x, vy: view.y, moved: false };
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
    drag.current = null;
  };

  const zoomBy = (f: number) => {
    touched.current = true;
    setView((v) => zoomAt(v, f, { x: size.width / 2, y: size.height / 2 }));
  };
  const sel = new Set(selected);

  return (
    <div className="lineage-canvas" ref={host} onWheel={onWheel} onPointerDown={onPointerDown} onPointerMove={onPointerMove} onPointerUp={onPointerUp} onPointerLeave={onPointerUp}>
      <svg width="100%" height="100%" role="group" aria-label="Lineage graph">
        <defs>
          <marker id="lin-arrow" viewBox="0 0 8 8" refX="7" refY="4" markerWidth="6" markerHeight="6" orient="auto">
            <path d="M0,0 L8,4 L0,8 z" className="edge-arrow" />
          </marker>
        </defs>
        <g transform={`translate(${view.x},${view.y}) scale(${view.k})`}>
          {visibleEdges.map((e) => {
            const pts = layout.edges.get(e.id);
            if (!pts) return null;
            const mid = labels ? midpoint(pts) : undefined;
            return (
              <g key={e.id} className="fork-edge">
                <path d={pathOf(pts)} className="edge" markerEnd="url(#lin-arrow)" />
                {mid && (
                  <text x={mid.x} y={mid.y - 5} textAnchor="middle" className="edge-label">
                    {e.label}
                  </text>
                )}
              </g>
            );
          })}
          {visibleNodes.map((id) => {
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
                onSelect={onSelect}
                onOpen={onOpen}
                dragging={drag}
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
          {Math.round(view.k * 100)}% · {visibleNodes.length} drawn
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
  onSelect: (id: string, additive: boolean) => void;
  onOpen: (id: string) => void;
  dragging: React.RefObject<{ moved: boolean } | null>;
}

const WorldBox = memo(function WorldBox({ node: n, x, y, w, h, labels, selected, match, collapsed, onSelect, onOpen, dragging }: WorldBoxProps) {
  const status = n.status ?? 'none';
  return (
    <g
      transform={`translate(${x},${y})`}
      className={`world-node domain-${n.domain} wstatus-${status}${selected ? ' selected' : ''}${match ? ' match' : ''}`}
      role="button"
      tabIndex={0}
      aria-pressed={selected}
      aria-label={`${n.name || n.id}, ${n.domain}, ${n.status ? runStatusLabel(n.status) : 'no runs'}`}
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
      }}
    >
      <rect width={w} height={h} rx={6} className="world-box" />
      <rect width={6} height={h} rx={2} className="world-status" />
      {labels && (
        <>
          <text x={14} y={17} className="world-title">
            {clip(n.name || n.id, 24)}
          </text>
          <text x={14} y={33} className="world-sub">
            {n.domain === 'real' ? 'task' : 'sim'} · {n.status ? runStatusLabel(n.status) : 'no runs'}
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
