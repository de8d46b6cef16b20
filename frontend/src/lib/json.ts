// JSON shown as a collapsible tree and compared as a diff. The tree is
// flattened into rows here (pure), so the component only draws rows and
// toggles paths; paths are JSON Pointers, like the backend's diff.
import type { Change, LedgerEvent } from '../bridge/types';
import { truncate } from './payload';

/** pointer escapes one key for a JSON Pointer (RFC 6901). */
export function escapeKey(k: string): string {
  return k.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** pointerSegments splits a JSON Pointer into its keys. */
export function pointerSegments(path: string): string[] {
  if (path === '') return [];
  return path
    .replace(/^\//, '')
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

export type JsonKind = 'object' | 'array' | 'string' | 'number' | 'boolean' | 'null';

export function kindOf(v: unknown): JsonKind {
  if (v === null || v === undefined) return 'null';
  if (Array.isArray(v)) return 'array';
  switch (typeof v) {
    case 'object':
      return 'object';
    case 'string':
      return 'string';
    case 'number':
      return 'number';
    case 'boolean':
      return 'boolean';
    default:
      return 'null';
  }
}

/** TreeRow is one line of a JSON tree. */
export interface TreeRow {
  path: string;
  depth: number;
  /** The key or index; "" for the root. */
  key: string;
  kind: JsonKind;
  /** For containers: how many children. */
  size: number;
  expandable: boolean;
  expanded: boolean;
  /** For leaves: the value as JSON; for containers: a one-line preview. */
  text: string;
}

/** compact renders a value as one line of JSON of at most max characters. */
export function compact(v: unknown, max = 80): string {
  if (v === undefined) return '';
  try {
    return truncate(JSON.stringify(v) ?? 'null', max);
  } catch {
    return truncate(String(v), max);
  }
}

/** defaultExpanded opens the first levels of a value (at most limit paths). */
export function defaultExpanded(v: unknown, depth = 1, limit = 200): Set<string> {
  const out = new Set<string>();
  const walk = (x: unknown, path: string, d: number) => {
    if (out.size >= limit || d > depth) return;
    const k = kindOf(x);
    if (k !== 'object' && k !== 'array') return;
    out.add(path);
    for (const [key, child] of entries(x)) walk(child, `${path}/${escapeKey(key)}`, d + 1);
  };
  walk(v, '', 0);
  return out;
}

function entries(v: unknown): [string, unknown][] {
  if (Array.isArray(v)) return v.map((x, i) => [String(i), x]);
  if (v !== null && typeof v === 'object') return Object.entries(v as Record<string, unknown>);
  return [];
}

/** treeRows flattens a value into the rows shown, opening the containers whose paths are in expanded. */
export function treeRows(value: unknown, expanded: ReadonlySet<string>, maxRows = 5000): TreeRow[] {
  const rows: TreeRow[] = [];
  const walk = (v: unknown, path: string, key: string, depth: number) => {
    if (rows.length >= maxRows) return;
    const kind = kindOf(v);
    const container = kind === 'object' || kind === 'array';
    const kids = container ? entries(v) : [];
    const open = container && expanded.has(path);
    rows.push({
      path,
      depth,
      key,
      kind,
      size: kids.length,
      expandable: container && kids.length > 0,
      expanded: open,
      text: container ? compact(v, 60) : compact(v, 240),
    });
    if (open) for (const [k, child] of kids) walk(child, `${path}/${escapeKey(k)}`, k, depth + 1);
  };
  walk(value, '', '', 0);
  return rows;
}

/** toggle opens or closes one path. */
export function toggle(expanded: ReadonlySet<string>, path: string): Set<string> {
  const next = new Set(expanded);
  if (next.has(path)) next.delete(path);
  else next.add(path);
  return next;
}

/** changeMarks maps each changed path, and every path above it, to how it changed, for highlighting a tree. */
export function changeMarks(changes: readonly Change[]): Map<string, Change['kind'] | 'inside'> {
  const marks = new Map<string, Change['kind'] | 'inside'>();
  for (const c of changes) {
    marks.set(c.path, c.kind);
    const segs = pointerSegments(c.path);
    for (let i = segs.length - 1; i >= 0; i--) {
      const above = segs.slice(0, i).map((s) => `/${escapeKey(s)}`).join('');
      if (!marks.has(above)) marks.set(above, 'inside');
    }
  }
  return marks;
}

/** expandToChanges opens every container above a changed path, so a diff shows its changes. */
export function expandToChanges(changes: readonly Change[], base: ReadonlySet<string> = new Set()): Set<string> {
  const out = new Set(base);
  for (const c of changes) {
    const segs = pointerSegments(c.path);
    for (let i = 0; i < segs.length; i++) out.add(segs.slice(0, i).map((s) => `/${escapeKey(s)}`).join(''));
  }
  return out;
}

/** DiffCounts is how many paths were added, removed and changed. */
export function diffCounts(changes: readonly Change[]): Record<Change['kind'], number> {
  const out = { added: 0, removed: 0, changed: 0 };
  for (const c of changes) out[c.kind] += 1;
  return out;
}

/** EventPair is one row of the side-by-side event diff. */
export interface EventPair {
  a?: LedgerEvent;
  b?: LedgerEvent;
  /** Both sides record the same type and payload at this position. */
  same: boolean;
}

/** pairEvents lines up the two branches' events after their shared prefix, position by position. */
export function pairEvents(a: readonly LedgerEvent[], b: readonly LedgerEvent[]): EventPair[] {
  const n = Math.max(a.length, b.length);
  const out: EventPair[] = [];
  for (let i = 0; i < n; i++) {
    const x = a[i];
    const y = b[i];
    const same = x !== undefined && y !== undefined && x.type === y.type && compact(x.payload, 1e6) === compact(y.payload, 1e6);
    const pair: EventPair = { same };
    if (x) pair.a = x;
    if (y) pair.b = y;
    out.push(pair);
  }
  return out;
}
