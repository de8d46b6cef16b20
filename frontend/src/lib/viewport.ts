// Pan and zoom of a large drawing: a view maps world coordinates to the
// screen (screen = world × k + offset). Only what the view shows is drawn.
import type { Box } from './layout';

export interface View {
  x: number;
  y: number;
  k: number;
}

export interface Size {
  width: number;
  height: number;
}

export interface Rect {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

/** MIN_ZOOM lets Fit show a whole 5,000-world lineage (the canvas draws it at any scale). */
export const MIN_ZOOM = 0.004;
export const MAX_ZOOM = 2;

const clampK = (k: number) => Math.min(MAX_ZOOM, Math.max(MIN_ZOOM, k));

/** fitView shows a whole drawing of size content in viewport, never enlarged past 1. */
export function fitView(content: Size, viewport: Size, pad = 24): View {
  if (content.width <= 0 || content.height <= 0 || viewport.width <= 0 || viewport.height <= 0) return { x: 0, y: 0, k: 1 };
  const k = clampK(Math.min((viewport.width - 2 * pad) / content.width, (viewport.height - 2 * pad) / content.height, 1));
  return { k, x: (viewport.width - content.width * k) / 2, y: (viewport.height - content.height * k) / 2 };
}

/** zoomAt scales by factor, keeping the world point under screen point p still. */
export function zoomAt(v: View, factor: number, p: { x: number; y: number }): View {
  const k = clampK(v.k * factor);
  const wx = (p.x - v.x) / v.k;
  const wy = (p.y - v.y) / v.k;
  return { k, x: p.x - wx * k, y: p.y - wy * k };
}

/** centerOn moves the view so box is in the middle, zooming in to at least minK. */
export function centerOn(v: View, box: Box, viewport: Size, minK = 0.8): View {
  const k = Math.max(v.k, minK);
  return {
    k,
    x: viewport.width / 2 - (box.x + box.width / 2) * k,
    y: viewport.height / 2 - (box.y + box.height / 2) * k,
  };
}

/** visibleRect is the part of the world the view shows, grown by margin screen pixels. */
export function visibleRect(v: View, viewport: Size, margin = 100): Rect {
  return {
    x0: -(margin + v.x) / v.k + 0,
    y0: -(margin + v.y) / v.k + 0,
    x1: (viewport.width + margin - v.x) / v.k,
    y1: (viewport.height + margin - v.y) / v.k,
  };
}

/** intersects reports whether a box overlaps a rect. */
export function intersects(b: Box, r: Rect): boolean {
  return b.x <= r.x1 && b.x + b.width >= r.x0 && b.y <= r.y1 && b.y + b.height >= r.y0;
}

/** cull returns the ids of the boxes inside rect, skipping hidden ones. */
export function cull(boxes: ReadonlyMap<string, Box>, r: Rect, hidden?: ReadonlySet<string>): string[] {
  const out: string[] = [];
  for (const [id, b] of boxes) if (!hidden?.has(id) && intersects(b, r)) out.push(id);
  return out;
}

/** boundsOf is the box around a set of points (an edge's bounding box). */
export function boundsOf(points: readonly { x: number; y: number }[]): Box {
  if (points.length === 0) return { x: 0, y: 0, width: 0, height: 0 };
  let x0 = Infinity;
  let y0 = Infinity;
  let x1 = -Infinity;
  let y1 = -Infinity;
  for (const p of points) {
    x0 = Math.min(x0, p.x);
    y0 = Math.min(y0, p.y);
    x1 = Math.max(x1, p.x);
    y1 = Math.max(y1, p.y);
  }
  return { x: x0, y: y0, width: x1 - x0, height: y1 - y0 };
}

/** toWorld maps a screen point (relative to the drawing's corner) to world coordinates. */
export function toWorld(v: View, p: { x: number; y: number }): { x: number; y: number } {
  return { x: (p.x - v.x) / v.k, y: (p.y - v.y) / v.k };
}

/**
 * hitTest returns the id of the box under world point p, skipping hidden
 * ones; the last box given wins where boxes overlap (it is drawn on top).
 */
export function hitTest(boxes: ReadonlyMap<string, Box>, p: { x: number; y: number }, hidden?: ReadonlySet<string>): string | undefined {
  let hit: string | undefined;
  for (const [id, b] of boxes) {
    if (p.x >= b.x && p.x <= b.x + b.width && p.y >= b.y && p.y <= b.y + b.height && !hidden?.has(id)) hit = id;
  }
  return hit;
}
