import type { Cell, GridModel } from '../lib/grid';
import './worlds.css';

interface GridViewProps {
  grid: GridModel;
  /** Cells visited by the steps run from this screen, oldest first. */
  trail?: readonly Cell[];
  size?: number;
}

/** GridView draws a Branching Grid state: walls, the goal, the agent and its recent trail. */
export function GridView({ grid, trail = [], size = 360 }: GridViewProps) {
  const n = grid.size;
  const c = Math.max(6, Math.min(40, Math.floor(size / n)));
  const px = c * n;
  const centre = ([x, y]: Cell) => ({ cx: x * c + c / 2, cy: y * c + c / 2 });
  const pts = trail.map((t) => centre(t));
  const agent = centre(grid.pos);
  const goal = centre(grid.goal);
  return (
    <svg
      className="grid-view"
      width={px + 2}
      height={px + 2}
      viewBox={`-1 -1 ${px + 2} ${px + 2}`}
      role="img"
      aria-label={`Grid ${n} by ${n}: agent at ${grid.pos[0]}, ${grid.pos[1]}; goal at ${grid.goal[0]}, ${grid.goal[1]}; ${grid.walls.length} walls${grid.done ? '; goal reached' : ''}`}
      data-testid="grid-view"
    >
      <rect x={0} y={0} width={px} height={px} className="grid-bg" />
      {Array.from({ length: n + 1 }, (_, i) => (
        <g key={i} className="grid-line">
          <line x1={i * c} y1={0} x2={i * c} y2={px} />
          <line x1={0} y1={i * c} x2={px} y2={i * c} />
        </g>
      ))}
      {grid.walls.map(([x, y]) => (
        <rect key={`${x},${y}`} x={x * c} y={y * c} width={c} height={c} className="grid-wall" data-wall={`${x},${y}`} />
      ))}
      <rect x={grid.goal[0] * c + 2} y={grid.goal[1] * c + 2} width={c - 4} height={c - 4} rx={3} className="grid-goal" />
      <text x={goal.cx} y={goal.cy + 4} textAnchor="middle" className="grid-goal-mark">
        ★
      </text>
      {pts.length > 1 && <polyline points={pts.map((p) => `${p.cx},${p.cy}`).join(' ')} className="grid-trail" />}
      <circle cx={agent.cx} cy={agent.cy} r={c * 0.32} className={`grid-agent${grid.done ? ' done' : ''}`} data-testid="grid-agent" />
    </svg>
  );
}
