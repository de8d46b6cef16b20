import type { KeyboardEvent } from 'react';
import { type LineageModel, matchReason } from '../lib/lineage';
import { shortId } from '../lib/ids';
import './lineage.css';

/** HINT says what Find looks in and how to move between matches. */
const HINT = 'Finds worlds whose name, world id or run id holds the text. Enter or ↓ goes to the next match, ↑ to the one before.';

/**
 * LineageFind is the lineage's search box: it says how many worlds match,
 * which one is shown and why it matches (the field and the text found in
 * it), and moves between matches with Enter and the arrow keys.
 */
export function LineageFind({
  model,
  query,
  matches,
  index,
  current,
  onQuery,
  onGo,
}: {
  model?: LineageModel;
  query: string;
  matches: readonly string[];
  /** The position of the match shown, in matches. */
  index: number;
  /** The match shown (selected), if one is. */
  current?: string;
  onQuery: (q: string) => void;
  /** onGo moves step matches on (1 next, -1 back, 0 the current one). */
  onGo: (step: number) => void;
}) {
  const shown = current !== undefined && matches[index] === current ? model?.byId.get(current) : undefined;
  const why = shown ? matchReason(shown, query) : undefined;
  const onKey = (e: KeyboardEvent<HTMLInputElement>) => {
    if (matches.length === 0) return;
    if (e.key === 'ArrowDown' || (e.key === 'Enter' && !e.shiftKey)) {
      e.preventDefault();
      onGo(shown ? 1 : 0);
    } else if (e.key === 'ArrowUp' || (e.key === 'Enter' && e.shiftKey)) {
      e.preventDefault();
      onGo(shown ? -1 : 0);
    }
  };
  return (
    <form
      className="search lineage-find"
      role="search"
      onSubmit={(e) => {
        e.preventDefault();
        onGo(shown ? 1 : 0);
      }}
    >
      <input
        className="input"
        type="search"
        placeholder="Find by name or id"
        value={query}
        onChange={(e) => onQuery(e.target.value)}
        onKeyDown={onKey}
        aria-label="Search worlds by id or name"
        aria-describedby="lineage-find-hint"
        title={HINT}
      />
      {query.trim() !== '' && (
        <span className="muted small" aria-live="polite" data-testid="find-count">
          {matches.length === 0 ? 'no match' : `${Math.min(index + 1, matches.length)} of ${matches.length}`}
        </span>
      )}
      <button type="button" className="button small" disabled={matches.length === 0} onClick={() => onGo(-1)} aria-label="Previous match" title="Previous match (↑)">
        ↑
      </button>
      <button type="submit" className="button small" disabled={matches.length === 0} title="Next match (Enter or ↓)">
        Find
      </button>
      <p id="lineage-find-hint" className="find-why small muted" data-testid="find-why">
        {shown && why ? (
          <>
            {shown.name || shortId(shown.id)}: its {why.field} <span className="mono">{why.text.slice(0, why.start)}<mark>{why.text.slice(why.start, why.end)}</mark>{why.text.slice(why.end)}</span> holds “{query.trim()}”
          </>
        ) : query.trim() !== '' ? (
          HINT
        ) : null}
      </p>
    </form>
  );
}
