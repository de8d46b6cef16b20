// Which rows of a long list are in view, for rows of one fixed height. A
// list taller than a browser lets an element be (about 33M px in Chromium
// and WebKit, 17M in Firefox) is drawn in a shorter box, with the scroll
// position scaled, so a million rows scroll end to end. Pure: the list only
// draws what this says.

/** MAX_HEIGHT is the tallest box the list is drawn in, in px. */
export const MAX_HEIGHT = 15_000_000;

/** Geometry is a list's rows and its view. */
export interface Geometry {
  count: number;
  rowHeight: number;
  /** The view's height, px. */
  viewport: number;
}

/** contentHeight is the height of the box the list is drawn in. */
export function contentHeight(g: Geometry, max = MAX_HEIGHT): number {
  return Math.min(g.count * g.rowHeight, max);
}

/** scaleOf is how many px of the whole list one px of the box's scroll stands for (≥ 1). */
export function scaleOf(g: Geometry, max = MAX_HEIGHT): number {
  const full = g.count * g.rowHeight - g.viewport;
  const box = contentHeight(g, max) - g.viewport;
  return full > 0 && box > 0 ? Math.max(1, full / box) : 1;
}

/** RowWindow is the rows to draw and where each goes. */
export interface RowWindow {
  first: number;
  last: number;
  /** top is where row i goes in the box, px. */
  top: (i: number) => number;
}

/** rowWindow is the rows in view at scrollTop, with overscan rows each side. */
export function rowWindow(g: Geometry, scrollTop: number, overscan = 10, max = MAX_HEIGHT): RowWindow {
  if (g.count === 0) return { first: 0, last: -1, top: () => 0 };
  const scale = scaleOf(g, max);
  const at = Math.max(0, scrollTop) * scale; // the view's top in the whole list
  const first = Math.max(0, Math.floor(at / g.rowHeight) - overscan);
  const last = Math.min(g.count - 1, Math.ceil((at + g.viewport) / g.rowHeight) + overscan);
  return { first, last, top: (i) => scrollTop + i * g.rowHeight - at };
}

/** scrollTopFor is the box's scroll position that shows row i at the start, centre or end of the view. */
export function scrollTopFor(g: Geometry, i: number, align: 'start' | 'center' | 'end', max = MAX_HEIGHT): number {
  const shift = align === 'start' ? 0 : align === 'center' ? (g.viewport - g.rowHeight) / 2 : g.viewport - g.rowHeight;
  const at = Math.min(Math.max(0, i * g.rowHeight - shift), Math.max(0, g.count * g.rowHeight - g.viewport));
  return at / scaleOf(g, max);
}
