// The Branching Grid's state (backend/starlark/examples/branching_grid.star)
// drawn as a picture: {size, pos: [x, y], goal: [x, y], walls: [[x, y]…],
// steps, params}. Any state of that shape is drawn as a grid; any other
// state falls back to the JSON tree.

export type Cell = readonly [number, number];

export interface GridModel {
  size: number;
  pos: Cell;
  goal: Cell;
  walls: Cell[];
  steps?: number;
  /** The agent is on the goal. */
  done: boolean;
}

const MAX_SIZE = 200;

function cell(v: unknown, size: number): Cell | undefined {
  if (!Array.isArray(v) || v.length !== 2) return undefined;
  const [x, y] = v as unknown[];
  if (!Number.isInteger(x) || !Number.isInteger(y)) return undefined;
  const cx = x as number;
  const cy = y as number;
  if (cx < 0 || cy < 0 || cx >= size || cy >= size) return undefined;
  return [cx, cy];
}

/** asGrid reads a state as a grid, or returns undefined when it is not one. */
export function asGrid(state: unknown): GridModel | undefined {
  if (state === null || typeof state !== 'object' || Array.isArray(state)) return undefined;
  const s = state as Record<string, unknown>;
  const size = s.size;
  if (!Number.isInteger(size) || (size as number) < 1 || (size as number) > MAX_SIZE) return undefined;
  const n = size as number;
  const pos = cell(s.pos, n);
  const goal = cell(s.goal, n);
  if (!pos || !goal || !Array.isArray(s.walls)) return undefined;
  const walls: Cell[] = [];
  for (const w of s.walls) {
    const c = cell(w, n);
    if (!c) return undefined;
    walls.push(c);
  }
  const g: GridModel = { size: n, pos, goal, walls, done: pos[0] === goal[0] && pos[1] === goal[1] };
  if (Number.isInteger(s.steps)) g.steps = s.steps as number;
  return g;
}

/** trailOf collects the cells a run of "moved" events visited, in order. */
export function trailOf(emitted: readonly unknown[]): Cell[] {
  const out: Cell[] = [];
  for (const e of emitted) {
    const m = e as { type?: unknown; to?: unknown } | null;
    if (m?.type !== 'moved' || !Array.isArray(m.to) || m.to.length !== 2) continue;
    const [x, y] = m.to as unknown[];
    if (Number.isInteger(x) && Number.isInteger(y)) out.push([x as number, y as number]);
  }
  return out;
}
