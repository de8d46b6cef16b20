import { useMemo, useState } from 'react';
import { type TreeRow, defaultExpanded, toggle, treeRows } from '../lib/json';

interface JsonTreeProps {
  value: unknown;
  /** Paths to open at first; defaults to the first level. */
  initiallyExpanded?: ReadonlySet<string>;
  /** Highlights by path (added, removed, changed, or inside a change). */
  marks?: ReadonlyMap<string, string>;
  label?: string;
}

/** JsonTree shows a JSON value as a collapsible tree. */
export function JsonTree({ value, initiallyExpanded, marks, label = 'JSON' }: JsonTreeProps) {
  const [expanded, setExpanded] = useState<ReadonlySet<string>>(() => initiallyExpanded ?? defaultExpanded(value));
  const rows = useMemo(() => treeRows(value, expanded), [value, expanded]);
  return (
    <div className="json-tree mono" role="tree" aria-label={label}>
      {rows.map((r) => (
        <Row key={r.path} row={r} mark={marks?.get(r.path)} onToggle={() => setExpanded((e) => toggle(e, r.path))} />
      ))}
    </div>
  );
}

function Row({ row: r, mark, onToggle }: { row: TreeRow; mark: string | undefined; onToggle: () => void }) {
  const container = r.kind === 'object' || r.kind === 'array';
  return (
    <div
      className={`json-row${mark ? ` mark-${mark}` : ''}`}
      role="treeitem"
      aria-level={r.depth + 1}
      aria-expanded={r.expandable ? r.expanded : undefined}
      aria-selected={false}
      style={{ paddingLeft: 4 + r.depth * 14 }}
      data-path={r.path}
    >
      {r.expandable ? (
        <button type="button" className="json-toggle" onClick={onToggle} aria-label={`${r.expanded ? 'Collapse' : 'Expand'} ${r.path || 'root'}`}>
          {r.expanded ? '▾' : '▸'}
        </button>
      ) : (
        <span className="json-toggle-space" />
      )}
      {r.key !== '' && <span className="json-key">{r.key}: </span>}
      {container ? (
        r.expanded ? (
          <span className="json-meta">{r.kind === 'array' ? `[${r.size}]` : `{${r.size}}`}</span>
        ) : (
          <span className="json-preview">{r.text}</span>
        )
      ) : (
        <span className={`json-${r.kind}`}>{r.text}</span>
      )}
    </div>
  );
}
