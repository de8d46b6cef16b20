import { formatCount } from '../lib/format';
import type { Found } from '../lib/timelinePages';
import type { SearchState } from './useSearch';
import './timeline.css';

/**
 * SearchStatus says how far a search through the whole history has got and
 * what it found: while it runs, a progress bar (positions searched of the
 * history) and Stop; when it waits (a first screenful found, or stopped),
 * "Find more"; at the end, how many events match.
 */
export function SearchStatus({ search, found, total, onStop, onMore }: { search: SearchState; found?: Found; total: number; onStop: () => void; onMore: () => void }) {
  const end = Math.max(found?.total ?? 0, total);
  const searched = found?.next ?? 0;
  const done = found !== undefined && searched >= end;
  const running = search.searching || (!found && !search.error && !search.stopped);
  const matches = formatCount(found?.rows.length ?? 0);
  const text = done
    ? `${matches} of ${formatCount(total)} events match`
    : search.stopped
      ? `Stopped: ${matches} matches in the first ${formatCount(searched)} of ${formatCount(end)} events`
      : running
        ? `${matches} matches so far, ${formatCount(searched)} of ${formatCount(end)} events searched…`
        : `${matches} matches in the first ${formatCount(searched)} of ${formatCount(end)} events`;
  return (
    <span className="search-status">
      <span className="muted" aria-live="polite" data-testid="search-status">
        {text}
      </span>
      {running && !done && (
        <>
          <progress className="search-progress" max={end || 1} value={searched} aria-label="Searched of the history" title={`${Math.floor((100 * searched) / (end || 1))}% of the history searched`} />
          <button type="button" className="button small" onClick={onStop}>
            Stop
          </button>
        </>
      )}
      {!running && !done && found && (
        <button type="button" className="button small" onClick={onMore} title="Search on from where the search is, for more matches">
          Find more
        </button>
      )}
    </span>
  );
}
