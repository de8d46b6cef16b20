import { type FormEvent, useCallback, useEffect, useState } from 'react';
import './memory.css';
import { type DucklmApi, type Memory, type MemoryType, type Reality, toBridgeError } from '../bridge';
import { formatNanos } from '../lib/format';
import { href } from '../lib/route';
import { type Load, useLoad, useThrottled } from '../ui/useLoad';
import { useRelativeNow } from '../ui/useNow';
import { MemoryDetailPanel } from './MemoryDetailPanel';
import { MemoryList, type Row } from './MemoryList';
import { ReindexPanel } from './ReindexPanel';
import { MEMORY_TYPES, countText, indexText, sentence } from './format';

/** PAGE is how many memories one page of the list holds. */
export const PAGE = 50;

/** What the list shows: the newest memories page by page, or a search's results. */
type Listing =
  | { status: 'loading' }
  | { status: 'error'; message: string }
  | { status: 'ready'; rows: Row[]; next: string; more: 'idle' | 'loading' | { error: string } };

interface Filters {
  type: MemoryType | '';
  reality: Reality | '';
}

/**
 * MemoryView is the Memory screen: the store's status, semantic search and
 * the newest memories, one memory's provenance, deletion, and re-embedding
 * with another model.
 */
export function MemoryView({ api }: { api: DucklmApi }) {
  const [status, reloadStatus] = useLoad(() => api.memoryStatus(), [api]);
  const [input, setInput] = useState('');
  const [query, setQuery] = useState('');
  const [filters, setFilters] = useState<Filters>({ type: '', reality: '' });
  const [listing, setListing] = useState<Listing>({ status: 'loading' });
  const [refresh, setRefresh] = useState(0);
  const [selected, setSelected] = useState<string | undefined>();
  const [detail, reloadDetail] = useLoad(() => (selected ? api.memoryDetail(selected) : Promise.resolve(undefined)), [api, selected]);
  const [reindexOpen, setReindexOpen] = useState(false);
  const [notice, setNotice] = useState('');
  // Every time shown relative to now: the list's, and the open memory's.
  const m = detail.value;
  const now = useRelativeNow([
    ...(listing.status === 'ready' ? listing.rows.map((r) => r.createdAt) : []),
    ...(m ? [m.memory.createdAt, m.memory.mergedAt ?? m.memory.updatedAt, ...m.sources.map((x) => x.addedAt)] : []),
  ]);

  // The first page, or the search: again whenever the query, the filters
  // or what is stored changes.
  useEffect(() => {
    let live = true;
    setListing((l) => (l.status === 'ready' ? l : { status: 'loading' }));
    const f = { type: filters.type, reality: filters.reality, runId: '' };
    const load: Promise<{ rows: Row[]; next: string }> = query
      ? api.searchMemories({ ...f, query, k: 50 }).then((rows) => ({ rows, next: '' }))
      : api.listMemories({ ...f, limit: PAGE, before: '' }).then((p) => ({ rows: p.memories, next: p.next }));
    load.then(
      (r) => live && setListing({ status: 'ready', ...r, more: 'idle' }),
      (e: unknown) => live && setListing({ status: 'error', message: toBridgeError(e).message }),
    );
    return () => {
      live = false;
    };
  }, [api, query, filters, refresh]);

  const loadMore = () => {
    if (listing.status !== 'ready' || !listing.next) return;
    setListing({ ...listing, more: 'loading' });
    api.listMemories({ type: filters.type, reality: filters.reality, runId: '', limit: PAGE, before: listing.next }).then(
      (p) =>
        setListing((l) => {
          if (l.status !== 'ready') return l;
          const seen = new Set(l.rows.map((r) => r.id));
          return { ...l, rows: [...l.rows, ...p.memories.filter((m: Memory) => !seen.has(m.id))], next: p.next, more: 'idle' };
        }),
      (e: unknown) => setListing((l) => (l.status === 'ready' ? { ...l, more: { error: toBridgeError(e).message } } : l)),
    );
  };

  const reloadAll = useCallback(() => {
    reloadStatus();
    setRefresh((n) => n + 1);
  }, [reloadStatus]);

  // Runs write memories while the screen is open: follow the ledger.
  const onWrite = useThrottled(reloadAll, 1000);
  useEffect(
    () =>
      api.onLedgerEvents((events) => {
        if (events.some(decidesMemory)) onWrite();
      }),
    [api, onWrite],
  );

  // A re-embedding started elsewhere (another window or tab): follow it.
  const foreignReindex = status.value?.reindex?.running === true && !reindexOpen;
  useEffect(() => {
    if (!foreignReindex) return;
    const id = setInterval(reloadStatus, 1000);
    return () => clearInterval(id);
  }, [foreignReindex, reloadStatus]);

  const submit = (e: FormEvent) => {
    e.preventDefault();
    setNotice('');
    setQuery(input.trim());
  };
  const clear = () => {
    setInput('');
    setQuery('');
    setFilters({ type: '', reality: '' });
  };

  const onDeleted = (id: string) => {
    setSelected(undefined);
    setNotice('The memory was deleted.');
    setListing((l) => (l.status === 'ready' ? { ...l, rows: l.rows.filter((r) => r.id !== id) } : l));
    reloadAll();
  };

  const s = status.value;
  const filtered = filters.type !== '' || filters.reality !== '';
  const nothingStored = s?.memories === 0 && !query && !filtered;

  return (
    <div className="screen memory">
      <header className="screen-head">
        <h1>Memory</h1>
        <span className="muted">What ducklm remembers from task runs and recalls when it plans: search it, see where each memory came from, delete what is wrong.</span>
      </header>

      <section className="panel memory-status" aria-label="Memory status">
        {status.status === 'loading' && (
          <p className="loading pad">
            <span className="spinner" aria-hidden="true" /> Opening the memory store…
          </p>
        )}
        {status.status === 'error' && !s && (
          <div className="pad" role="alert">
            <p className="inline-error">{sentence(status.message)}</p>
            <button type="button" className="button small" onClick={reloadStatus}>
              Try again
            </button>
          </div>
        )}
        {s && (
          <div className="memory-stats">
            <div className="stat">
              <span className="stat-value" data-testid="memory-count">
                {s.memories.toLocaleString('en')}
              </span>
              <span className="stat-label">{s.memories === 1 ? 'memory' : 'memories'}</span>
            </div>
            <div className="stat">
              <span className="stat-value mono small-value" data-testid="memory-model">
                {s.model}
              </span>
              <span className="stat-label">{s.builtin ? 'built-in embedder' : 'Ollama embedding model'}</span>
            </div>
            <div className="stat">
              <span className="stat-value small-value">{indexText(s, formatNanos(s.loadTimeNs))}</span>
              <span className="stat-label">vector index</span>
            </div>
            <span className="spacer" />
            <button type="button" className="button" onClick={() => setReindexOpen(true)} disabled={reindexOpen}>
              Change embedding model…
            </button>
          </div>
        )}
        {s && s.stale > 0 && !s.reindex?.running && (
          <p className="inline-warn memory-banner">
            {countText(s.stale)} {s.stale === 1 ? 'is' : 'are'} embedded with another model and cannot be found by search until re-embedded:
            open “Change embedding model…” and repair with {s.model}.
          </p>
        )}
        {s?.preferred && s.preferred !== s.model && s.preferred.replace(/:latest$/, '') !== s.model.replace(/:latest$/, '') && !s.reindex?.running && (
          <p className="status-note memory-banner">
            Settings name {s.preferred} as the embedder, but memories are embedded with {s.model}. Re-embed them to switch.
          </p>
        )}
        {foreignReindex && s?.reindex && (
          <div className="memory-banner progress-row" role="status">
            <progress max={Math.max(1, s.reindex.total)} value={s.reindex.done} aria-label="Re-embedding progress" />
            <span className="small">
              Re-embedding with {s.reindex.model}: {s.reindex.done} of {s.reindex.total}
            </span>
          </div>
        )}
        {s?.reindex?.error && !s.reindex.running && !reindexOpen && (
          <p className="inline-error memory-banner">
            The last re-embedding, with {s.reindex.model}, failed: {sentence(s.reindex.error)} Searches use {s.model}.
          </p>
        )}
      </section>

      {reindexOpen && s && <ReindexPanel api={api} status={s} onFinished={reloadAll} onClose={() => setReindexOpen(false)} />}

      <div className="memory-body">
        <section className="panel memory-browse" aria-label="Find memories">
          <form className="memory-search" role="search" onSubmit={submit}>
            <div className="row">
              <input
                className="input grow"
                type="search"
                value={input}
                onChange={(e) => setInput(e.target.value)}
                placeholder="Search by meaning, e.g. which port does nginx use"
                aria-label="Search memories"
              />
              <button type="submit" className="button primary">
                Search
              </button>
            </div>
            <div className="row wrap">
              <select
                className="input"
                aria-label="Type"
                value={filters.type}
                onChange={(e) => setFilters({ ...filters, type: e.target.value as MemoryType | '' })}
              >
                <option value="">Any type</option>
                {MEMORY_TYPES.map((t) => (
                  <option key={t} value={t}>
                    {t}
                  </option>
                ))}
              </select>
              <select
                className="input"
                aria-label="Reality"
                value={filters.reality}
                onChange={(e) => setFilters({ ...filters, reality: e.target.value as Reality | '' })}
              >
                <option value="">Real and simulated</option>
                <option value="external_real">Real: from this machine</option>
                <option value="world_local">Simulated: hypotheses</option>
              </select>
              {(query || filtered || input) && (
                <button type="button" className="button" onClick={clear}>
                  Clear
                </button>
              )}
            </div>
          </form>
          <p className="memory-caption muted small">
            {query ? `Most similar to “${query}” first, scored by cosine similarity.` : 'Newest first.'}
            {notice && <span className="memory-notice"> {notice}</span>}
          </p>

          {listing.status === 'loading' && (
            <p className="loading pad">
              <span className="spinner" aria-hidden="true" /> Reading memories…
            </p>
          )}
          {listing.status === 'error' && (
            <div className="pad" role="alert">
              <p className="inline-error">
                {sentence(listing.message)}
                {query && s && !s.builtin && ` Searching asks ${s.model} for the query's vector: start Ollama, or re-embed with the built-in embedder.`}
              </p>
              <button type="button" className="button small" onClick={() => setRefresh((n) => n + 1)}>
                Try again
              </button>
            </div>
          )}
          {listing.status === 'ready' && listing.rows.length === 0 && (
            <div className="empty" data-testid="memory-empty">
              {nothingStored ? (
                <>
                  <p>
                    <strong>No memories yet.</strong>
                  </p>
                  <p>
                    ducklm writes one when a task step finishes and its result, scored by the critic, passes the write policy: an observation needs a
                    worth of 0.50, where worth is 70% the critic’s score and 30% the runtime’s weight. Results of simulated worlds are kept as
                    hypotheses, never as facts, and secrets are redacted first.
                  </p>
                  <p>
                    <a className="button" href={href({ screen: 'new' })}>
                      Run a task
                    </a>
                  </p>
                </>
              ) : query ? (
                <p>Nothing matches “{query}”{filtered ? ' with these filters' : ''}. Try other words, or clear the search.</p>
              ) : (
                <p>No memories match these filters. Clear them to see every memory.</p>
              )}
            </div>
          )}
          {listing.status === 'ready' && listing.rows.length > 0 && (
            <>
              <MemoryList rows={listing.rows} selected={selected} now={now} onSelect={setSelected} />
              {listing.next && (
                <div className="pad memory-more">
                  <button type="button" className="button" onClick={loadMore} disabled={listing.more === 'loading'}>
                    {listing.more === 'loading' ? 'Loading…' : `Show ${PAGE} older`}
                  </button>
                  {typeof listing.more === 'object' && <span className="inline-error"> {sentence(listing.more.error)} Try again.</span>}
                </div>
              )}
            </>
          )}
        </section>

        {selected ? (
          <MemoryDetailPanel
            key={selected}
            api={api}
            detail={present(detail)}
            now={now}
            onRetry={reloadDetail}
            onDeleted={onDeleted}
            onClose={() => setSelected(undefined)}
          />
        ) : (
          <section className="panel memory-detail memory-detail-empty" aria-label="Memory detail">
            <p className="empty">Select a memory to read all of it and see the runs and events it came from.</p>
          </section>
        )}
      </div>
    </div>
  );
}

/** present narrows a load of "maybe nothing yet" to one of a value. */
function present<T>(l: Load<T | undefined>): Load<T> {
  if (l.status === 'ready' && l.value !== undefined) return { ...l, value: l.value };
  if (l.status === 'error') return l.value === undefined ? { status: 'error', message: l.message } : { status: 'error', message: l.message, value: l.value };
  return { status: 'loading' };
}

/** decidesMemory says whether a ledger event records a memory decision: a memory.decided, or a step's result carrying one. */
function decidesMemory(e: { type: string; payload: unknown }): boolean {
  if (e.type === 'memory.decided') return true;
  const p = e.payload;
  return e.type === 'step.finished' && p !== null && typeof p === 'object' && typeof (p as { memory?: unknown }).memory === 'object' && (p as { memory?: unknown }).memory !== null;
}
