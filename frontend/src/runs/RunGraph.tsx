import { useMemo } from 'react';
import { type RunGraphModel, layoutRunGraph } from '../lib/runGraph';
import { pathOf } from '../lib/layout';
import { stepStateLabel } from '../lib/format';
import './runs.css';

interface RunGraphProps {
  model: RunGraphModel;
  selected: string | undefined;
  onSelect: (id: string) => void;
}

/**
 * RunGraph draws a run's task graph with each step's state. The layout
 * depends on the structure alone; states and selection are drawn on top, so
 * neither a live update nor a click lays the graph out again.
 */
export function RunGraph({ model, selected, onSelect }: RunGraphProps) {
  // eslint-disable-next-line react-hooks/exhaustive-deps
  const layout = useMemo(() => layoutRunGraph(model), [model.structure]);
  if (model.nodes.length === 0) return null;
  return (
    <div className="run-graph" role="group" aria-label="Task graph">
      <svg width={layout.width} height={layout.height} viewBox={`0 0 ${layout.width} ${layout.height}`}>
        <defs>
          <marker id="run-arrow" viewBox="0 0 8 8" refX="7" refY="4" markerWidth="7" markerHeight="7" orient="auto">
            <path d="M0,0 L8,4 L0,8 z" className="edge-arrow" />
          </marker>
        </defs>
        {model.edges.map((e) => {
          const pts = layout.edges.get(e.id);
          return pts ? <path key={e.id} d={pathOf(pts)} className="edge" markerEnd="url(#run-arrow)" /> : null;
        })}
        {model.nodes.map((n) => {
          const b = layout.nodes.get(n.id);
          if (!b) return null;
          const isSel = n.id === selected;
          const word = n.denied ? 'denied' : stepStateLabel(n.state);
          return (
            <g
              key={n.id}
              transform={`translate(${b.x},${b.y})`}
              className={`step-node step-${n.state}${n.denied ? ' step-denied' : ''}${isSel ? ' selected' : ''}`}
              role="button"
              tabIndex={0}
              aria-pressed={isSel}
              aria-label={`${n.label}: ${word}`}
              data-step={n.id}
              onClick={() => onSelect(n.id)}
              onKeyDown={(e) => {
                if (e.key === 'Enter' || e.key === ' ') {
                  e.preventDefault();
                  onSelect(n.id);
                }
              }}
            >
              <rect width={b.width} height={b.height} rx={7} className="step-box" />
              <rect width={5} height={b.height} rx={2} className="step-bar" />
              <text x={14} y={18} className="step-title">
                {clip(n.label, 22)}
              </text>
              <text x={14} y={35} className="step-sub">
                {n.tool} · {word}
                {n.attempts > 1 ? ` · try ${n.attempts}` : ''}
                {n.score !== undefined ? ` · ${n.score.toFixed(2)}` : ''}
              </text>
              {n.state === 'running' && <circle cx={b.width - 12} cy={12} r={4} className="pulse" />}
            </g>
          );
        })}
      </svg>
    </div>
  );
}

function clip(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n - 1)}…` : s;
}
