import type { Memory, RetrievedMemory } from '../bridge';
import { formatAbsolute, formatRelative } from '../lib/time';
import { realityBadge, similarity } from './format';

/** A row is a listed memory, or a search result with its similarity. */
export type Row = (Memory & { similarity?: undefined }) | RetrievedMemory;

interface Props {
  rows: Row[];
  selected: string | undefined;
  now: number;
  onSelect: (id: string) => void;
}

/** MemoryList shows memories as rows to pick from: score, type, reality, text, age. */
export function MemoryList({ rows, selected, now, onSelect }: Props) {
  return (
    <ul className="memory-list" aria-label="Memories">
      {rows.map((r) => {
        const badge = realityBadge(r.provenance);
        return (
          <li key={r.id}>
            <button
              type="button"
              className={`memory-item${r.id === selected ? ' selected' : ''}`}
              aria-pressed={r.id === selected}
              onClick={() => onSelect(r.id)}
              data-testid="memory-row"
              data-memory={r.id}
            >
              <span className="memory-item-head">
                {r.similarity !== undefined && (
                  <span className="score" title={`Similarity to the query: ${r.similarity.toFixed(4)}`}>
                    {similarity(r.similarity)}
                  </span>
                )}
                <span className={`badge mem-type type-${r.type}`}>{r.type}</span>
                <span className={`badge reality-${badge.reality}`} title={badge.title}>
                  {badge.label}
                </span>
                <span className="spacer" />
                <time className="muted small" dateTime={r.createdAt} title={formatAbsolute(r.createdAt)}>
                  {formatRelative(r.createdAt, now)}
                </time>
              </span>
              <span className="memory-item-text">{r.text}</span>
            </button>
          </li>
        );
      })}
    </ul>
  );
}
