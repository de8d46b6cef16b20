import { memo, useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from 'react';
import type { DeliberationRound, DucklmApi } from '../bridge';
import { formatCount } from '../lib/format';
import { shortId } from '../lib/ids';
import { decisionOf, describeDecision } from '../lib/decision';
import { previewPayload } from '../lib/payload';
import { href } from '../lib/route';
import { formatAbsolute } from '../lib/time';
import { CLOCKS, type Clock, type Domain, type Filter, NO_FILTER, type TimelineRow, clockDomain, clockValue, compileSearch, xOnAxis } from '../lib/timeline';
import { indexOfSeq, isFiltered, lanesOfSegments, rowAt, toHistoryFilter } from '../lib/timelinePages';
import { contentHeight, rowWindow, scrollTopFor } from '../lib/timelineWindow';
import { JsonTree } from '../ui/JsonTree';
import { useLoad, useThrottled } from '../ui/useLoad';
import { navigate } from '../ui/useRoute';
import { TaskRunForkDialog } from '../runs/PlanForkDialog';
import { ForkDialog } from '../worlds/ForkDialog';
import { roundLine } from '../lib/round';
import { useHistory } from './useHistory';
import { SearchStatus } from './SearchStatus';
import { useSearch } from './useSearch';
import './timeline.css';

const ROW_H = 28;
const LANE_W = 168;
/** A view not laid out yet (or jsdom) reports 0 px; a screenful is drawn anyway. */
const FALLBACK_HEIGHT = 560;
const OVERSCAN = 12;
/** How long the search box waits for typing to pause before it searches. */
const TYPING_MS = 250;

/**
 * TimelineView is every event of a run's full history, inherited prefix
 * included, on a chosen clock. It reads the history page by page as the
 * list scrolls; filters search the whole history in the backend.
 */
export function TimelineView({ api, runId, seq }: { api: DucklmApi; runId: string; seq?: number }) {
  const { state, retry, show } = useHistory(api, runId, seq);
  const [world] = useLoad(() => api.worldDetail(runId), [api, runId]);
  // Counting a million events by type takes the backend a second: it is
  // asked once the first rows are on screen, never before them.
  const [painted, setPainted] = useState(false);
  const [typeCounts] = useLoad(() => (painted ? api.historyTypes(runId) : Promise.resolve(undefined)), [api, runId, painted]);
  // A step a deliberation chose points at its round (its causation): the
  // rounds of a simulated run, by their events' ids, say why it was taken.
  const simulatedRun = world.value?.world.domain === 'simulated';
  const [rounds, reloadRounds] = useLoad(() => (simulatedRun ? api.deliberations(runId) : Promise.resolve([])), [api, runId, simulatedRun]);
  const refreshRounds = useThrottled(reloadRounds, 1000);
  useEffect(() => api.onLedgerEvents((batch) => simulatedRun && batch.some((e) => e.type === 'deliberation.round') && refreshRounds()), [api, simulatedRun, refreshRounds]);
  const roundByEvent = useMemo(() => {
    const m = new Map<string, DeliberationRound>();
    for (const r of rounds.value ?? []) if (r.eventId) m.set(r.eventId, r);
    return m;
  }, [rounds.value]);
  const [clock, setClock] = useState<Clock>('recorded');
  const [filter, setFilter] = useState<Filter>(NO_FILTER);
  const [text, setText] = useState(''); // the search as searched, once typing pauses
  const [jump, setJump] = useState('');
  const [jumpNote, setJumpNote] = useState<string>();
  const [selected, setSelected] = useState<TimelineRow>();
  const [forkFrom, setForkFrom] = useState<TimelineRow>();
  // A task run forks by its plan, a simulated world by a delta and a seed: each has its own dialog.
  const forkDomain = forkFrom && (world.value?.world.domain ?? (forkFrom.event.reality === 'external_real' ? 'real' : 'simulated'));

  useEffect(() => {
    if (filter.text === text) return;
    const id = setTimeout(() => setText(filter.text), filter.text === '' ? 0 : TYPING_MS);
    return () => clearTimeout(id);
  }, [filter.text, text]);

  const history = state.status === 'ready' ? state.history : undefined;
  const pageError = state.status === 'ready' ? state.pageError : undefined;
  const total = history?.total ?? 0;
  const searched = useMemo(() => ({ ...filter, text }), [filter, text]);
  const matcher = compileSearch(searched.text, searched.regex);
  const filtered = isFiltered(searched);
  const backendFilter = useMemo(() => (isFiltered(searched) && compileSearch(searched.text, searched.regex).ok ? toHistoryFilter(searched) : undefined), [searched]);
  const { search, more, findMore, stop, until } = useSearch(api, runId, backendFilter, total);
  const searchError = matcher.ok ? search.error : matcher.error;
  const found = filtered ? search.found : undefined;

  const count = filtered ? (found?.rows.length ?? 0) : total;
  const rowOf = (i: number): TimelineRow | undefined => (filtered ? found?.rows[i] : history ? rowAt(history, i) : undefined);
  const lanes = useMemo(() => lanesOfSegments(history?.segments ?? []), [history?.segments]);
  const laneOf = useMemo(() => new Map(lanes.map((l) => [l.stream, l.index])), [lanes]);
  const first = history?.first;
  const last = history?.last;
  const domain = useMemo(
    () => clockDomain([first, last].flatMap((e, index) => (e ? [{ index, event: e, inherited: false }] : [])), clock),
    [first, last, clock],
  );

  const scroller = useRef<HTMLDivElement>(null);
  const atEnd = useRef(seq === undefined);
  const [scrollTop, setScrollTop] = useState(0);
  const [viewport, setViewport] = useState(FALLBACK_HEIGHT);
  useLayoutEffect(() => {
    const el = scroller.current;
    if (!el) return;
    const measure = () => setViewport(el.clientHeight > 0 ? el.clientHeight : FALLBACK_HEIGHT);
    measure();
    if (typeof ResizeObserver === 'undefined') return;
    const ro = new ResizeObserver(measure);
    ro.observe(el);
    return () => ro.disconnect();
  }, [history !== undefined]); // eslint-disable-line react-hooks/exhaustive-deps
  // Only the rows in view are drawn: the window's maths is pure (lib/timelineWindow).
  const geometry = useMemo(() => ({ count, rowHeight: ROW_H, viewport }), [count, viewport]);
  const win = rowWindow(geometry, scrollTop, OVERSCAN);
  const items: { index: number; top: number }[] = [];
  for (let i = win.first; i <= win.last; i++) items.push({ index: i, top: win.top(i) });
  const firstShown = win.first;
  const lastShown = Math.max(win.first, win.last);
  const scrollToIndex = useCallback(
    (i: number, align: 'start' | 'center' | 'end') => {
      const top = scrollTopFor(geometry, i, align);
      if (scroller.current) scroller.current.scrollTop = top;
      setScrollTop(top);
    },
    [geometry],
  );

  // Matches are found oldest first, so a search shows them from the top (at
  // the end, the view would pull every match in); without one, the view
  // goes back to the newest events.
  const searchKey = backendFilter ? JSON.stringify(backendFilter) : '';
  const searchShown = useRef('');
  useEffect(() => {
    if (searchKey === searchShown.current) return;
    searchShown.current = searchKey;
    atEnd.current = searchKey === '';
    if (searchKey !== '') scrollToIndex(0, 'start');
  }, [searchKey, scrollToIndex]);

  // The rows in view are read (or searched) as they come into view.
  useEffect(() => {
    if (state.status !== 'ready') return;
    // A new search has just scrolled to its top (above): the rows in view
    // are where the list is now, not where it was drawn.
    if (filtered) more(Math.max(rowWindow(geometry, scroller.current?.scrollTop ?? scrollTop, OVERSCAN).last, 0) + 100);
    else if (atEnd.current && selected === undefined && count > 0) {
      // A view opening at the end is drawn once at the top before it
      // scrolls there (below): read the rows where it goes, not the oldest page.
      const end = rowWindow(geometry, scrollTopFor(geometry, count - 1, 'end'), OVERSCAN);
      show(end.first, Math.max(end.first, end.last));
    } else show(firstShown, lastShown);
  }, [state.status, filtered, firstShown, lastShown, show, more]); // eslint-disable-line react-hooks/exhaustive-deps

  // Live events keep the view at the end when it was there.
  useEffect(() => {
    if (atEnd.current && count > 0 && selected === undefined) scrollToIndex(count - 1, 'end');
  }, [count, scrollToIndex, selected]);

  // The first rows on screen, for the performance measurement (tests/perf).
  const marked = useRef(false);
  const drawnRows = items.filter((it) => rowOf(it.index) !== undefined).length;
  useLayoutEffect(() => {
    if (!marked.current && (drawnRows > 0 || (state.status === 'ready' && count === 0))) {
      marked.current = true;
      if (drawnRows > 0) performance.mark('timeline:rows', { detail: { rows: drawnRows, total } });
      setPainted(true);
    }
  }, [drawnRows, total, state.status, count]);

  // A search's start, first matches on screen and end, for the performance
  // measurement (tests/perf).
  const searchMarks = useRef({ key: '', rows: false, done: false });
  const searchDone = found !== undefined && found.next >= Math.max(found.total, total);
  useLayoutEffect(() => {
    if (searchKey === '') return;
    if (searchMarks.current.key !== searchKey) {
      // What is found now is the last search's: this one starts after this render.
      searchMarks.current = { key: searchKey, rows: false, done: false };
      performance.mark('timeline:search', { detail: searchKey });
      return;
    }
    const m = searchMarks.current;
    if (!m.rows && found && drawnRows > 0) {
      m.rows = true;
      performance.mark('timeline:search-rows', { detail: searchKey });
    }
    if (!m.done && searchDone) {
      m.done = true;
      performance.mark('timeline:search-done', { detail: { key: searchKey, matches: found?.rows.length } });
    }
  }, [searchKey, found, drawnRows, searchDone]);

  // Rows are numbered by their position in the whole history (#), which
  // goes on across the fork line where each stream's own seq starts again.
  const doJump = async (value: string) => {
    const n = Number(value.replace(/^#/, ''));
    if (!Number.isInteger(n) || n < 1) {
      setJumpNote('An event number is a whole number from 1.');
      return;
    }
    if (!history || n > history.total) {
      setJumpNote(`This history has ${formatCount(history?.total ?? 0)} events: #${formatCount(n)} is past its end.`);
      return;
    }
    await jumpTo(n - 1);
  };

  const jumpTo = async (index: number) => {
    if (!history) return;
    let i = index;
    if (filtered) {
      const f = await until(index);
      i = f?.rows.findIndex((r) => r.index === index) ?? -1;
      if (i < 0) {
        setJumpNote(`Event #${formatCount(index + 1)} is hidden by the filters; clear them to see it.`);
        return;
      }
      setSelected(f!.rows[i]);
    } else {
      setSelected(rowAt(history, index) ?? { index, event: placeholderEvent(index), inherited: index < history.inherited });
      show(index, index); // read its page now, not once the scroll settles
    }
    setJump(String(index + 1));
    setJumpNote(undefined);
    atEnd.current = false;
    scrollToIndex(i, 'center');
  };

  // A seq in the address is jumped to once the history is in.
  const jumped = useRef(false);
  useEffect(() => {
    if (seq && state.status === 'ready' && !jumped.current) {
      jumped.current = true;
      // The address names the run's own seq (as other screens link to it).
      const index = history ? indexOfSeq(history, seq, runId) : -1;
      if (index < 0) setJumpNote(`This history has no event with seq ${seq}.`);
      else void jumpTo(index);
    }
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [seq, state.status]);

  // A jumped-to row whose page was not read yet is shown once it is.
  const detail = selected && history && !filtered && selected.event.id === '' ? (rowAt(history, selected.index) ?? selected) : selected;
  const detailDecision = detail ? decisionOf(detail.event) : undefined;
  const w = world.value;
  const ownName = w ? w.world.name || shortId(w.world.id) : shortId(runId);
  const types = typeCounts.value ?? [];
  const searching = filtered && (search.searching || !found);

  return (
    <div className="screen timeline">
      <header className="screen-head">
        <div className="min0">
          <h1 className="ellipsis">Timeline · {ownName}</h1>
          <div className="meta-line">
            <a href={href(w?.world.domain === 'real' ? { screen: 'run', runId } : { screen: 'world', runId })}>back to the {w?.world.domain === 'real' ? 'run' : 'world'}</a>
            {history && (
              <span>
                {formatCount(history.total)} events, {formatCount(history.inherited)} inherited
              </span>
            )}
          </div>
        </div>
      </header>

      {state.status === 'loading' && (
        <div className="loading pad" role="status">
          <span className="spinner" aria-hidden="true" /> Reading the history…
        </div>
      )}
      {state.status === 'error' && (
        <section className="panel error-panel" role="alert">
          <div className="error-body">
            <h2>The history could not be read</h2>
            <p className="error-message">{state.message}</p>
            <button type="button" className="button primary" onClick={retry}>
              Try again
            </button>
          </div>
        </section>
      )}

      {history && (
        <>
          <div className="toolbar" role="toolbar" aria-label="Timeline controls">
            <label className="inline-field">
              <span>Swimlanes by</span>
              <select className="input" value={clock} onChange={(e) => setClock(e.target.value as Clock)} aria-label="Clock">
                {CLOCKS.map((c) => (
                  <option key={c.id} value={c.id} title={c.hint}>
                    {c.label}
                  </option>
                ))}
              </select>
            </label>
            <label className="inline-field">
              <span>Type</span>
              <select
                className="input"
                value={filter.types.size === 1 ? [...filter.types][0] : ''}
                onChange={(e) => setFilter((f) => ({ ...f, types: e.target.value ? new Set([e.target.value]) : new Set() }))}
                aria-label="Event type"
              >
                <option value="">all types</option>
                {types.map((t) => (
                  <option key={t.type} value={t.type}>
                    {t.type} ({formatCount(t.count)})
                  </option>
                ))}
              </select>
            </label>
            <label className="inline-field">
              <span>Reality</span>
              <select className="input" value={filter.reality} onChange={(e) => setFilter((f) => ({ ...f, reality: e.target.value as Filter['reality'] }))} aria-label="Reality">
                <option value="all">all</option>
                <option value="external_real">external-real</option>
                <option value="world_local">world-local</option>
              </select>
            </label>
            <label className="inline-field grow">
              <span>Search</span>
              <input
                className="input"
                type="search"
                value={filter.text}
                onChange={(e) => setFilter((f) => ({ ...f, text: e.target.value }))}
                placeholder={filter.regex ? 'regular expression' : 'text in type, stream or payload'}
                onKeyDown={(e) => {
                  if (e.key === 'Enter') setText(filter.text); // no need to wait for typing to pause
                }}
                aria-label="Search events"
                aria-invalid={searchError !== undefined}
              />
            </label>
            <label className="check-row">
              <input type="checkbox" checked={filter.regex} onChange={(e) => setFilter((f) => ({ ...f, regex: e.target.checked }))} /> regex
            </label>
            <form
              className="inline-field"
              onSubmit={(e) => {
                e.preventDefault();
                void doJump(jump);
              }}
            >
              <input className="input num" value={jump} onChange={(e) => setJump(e.target.value)} placeholder="#" aria-label="Jump to event #" title="The event's number in the whole history, as the first column shows it" />
              <button type="submit" className="button small">
                Jump
              </button>
            </form>
          </div>
          {(searchError || jumpNote || pageError) && (
            <p className="inline-error small" role="alert">
              {searchError ?? jumpNote ?? pageError}
              {!searchError && !jumpNote && pageError && (
                <button type="button" className="button small" onClick={retry}>
                  Try again
                </button>
              )}
            </p>
          )}
          <div className="lanes-legend small">
            {lanes.map((l) => (
              <span key={l.stream} className={`lane-chip lane-${l.index % 6}`} title={l.stream}>
                <span className="lane-dot" /> {l.inherited ? 'inherited ' : ''}
                {shortId(l.stream)} ({formatCount(l.events)})
              </span>
            ))}
            {filtered ? (
              <SearchStatus search={search} found={found} total={total} onStop={stop} onMore={findMore} />
            ) : (
              <span className="muted" aria-live="polite">
                {formatCount(total)} events
              </span>
            )}
          </div>

          <div className="timeline-body">
            <div className="panel timeline-table" role="table" aria-label="Events" aria-rowcount={count}>
              <div className="tl-row tl-head" role="row">
                <span role="columnheader" title="The event's number in the whole history; its stream's own seq is in the tooltip">#</span>
                <span role="columnheader">{CLOCKS.find((c) => c.id === clock)?.label}</span>
                <span role="columnheader">Recorded</span>
                <span role="columnheader">Type</span>
                <span role="columnheader">Payload</span>
              </div>
              <div
                className="tl-scroll"
                ref={scroller}
                onScroll={(e) => {
                  const el = e.currentTarget;
                  setScrollTop(el.scrollTop);
                  // A search's list stays where it is read; only the whole history follows its end.
                  atEnd.current = !filtered && el.scrollTop + viewport >= contentHeight(geometry) - ROW_H * 2;
                }}
              >
                {count === 0 ? (
                  <p className="empty">{!filtered ? 'This run has no events yet.' : searching ? 'Searching the history…' : 'No event matches the filters.'}</p>
                ) : (
                  <div style={{ height: contentHeight(geometry), position: 'relative' }}>
                    {items.map((item) => {
                      const r = rowOf(item.index);
                      // Keyed by position: a row keeps its element when its page arrives.
                      const key = r ? r.index : filtered ? `m${item.index}` : item.index;
                      if (!r) return <PendingRow key={key} top={item.top} index={item.index} />;
                      return (
                        <Row
                          key={key}
                          row={r}
                          top={item.top}
                          lane={laneOf.get(r.event.stream) ?? 0}
                          clock={clock}
                          domain={domain}
                          selected={selected?.index === r.index}
                          forkPoint={r.index === history.inherited && history.inherited > 0}
                          round={r.event.causationId ? roundByEvent.get(r.event.causationId)?.deliberationIndex : undefined}
                          onSelect={() => setSelected((s) => (s?.index === r.index ? undefined : r))}
                          onFork={() => setForkFrom(r)}
                        />
                      );
                    })}
                  </div>
                )}
              </div>
            </div>
            {detail && detail.event.id !== '' && (
              <aside className="panel event-detail" aria-label="Event">
                <header className="panel-head">
                  <h2 className="mono ellipsis">{detail.event.type}</h2>
                  <button type="button" className="button small" onClick={() => setSelected(undefined)}>
                    Close
                  </button>
                </header>
                <dl className="facts pad">
                  <div className="fact">
                    <dt>Stream</dt>
                    <dd className="mono" title={detail.event.stream}>
                      {shortId(detail.event.stream)} seq {detail.event.seq} · event #{formatCount(detail.index + 1)} of the history {detail.inherited && <span className="badge inherited-badge">inherited</span>}
                    </dd>
                  </div>
                  <div className="fact">
                    <dt>Recorded</dt>
                    <dd className="mono">{formatAbsolute(detail.event.recordedAt)}</dd>
                  </div>
                  <div className="fact">
                    <dt>Clocks</dt>
                    <dd data-testid="event-clocks">
                      <span title="The parent world's time where this world forked from it (0 for a root)">parent time {detail.event.parentTime}</span> ·{' '}
                      <span title="The round of deliberation this event belongs to (0: none)">deliberation index {detail.event.deliberationIndex}</span> ·{' '}
                      <span title="This world's own step count when the event happened">world-local time {detail.event.worldLocalTime}</span>
                    </dd>
                  </div>
                  <div className="fact">
                    <dt>Reality</dt>
                    <dd>
                      <span className={`badge reality-${detail.event.reality}`}>{detail.event.reality.replace('_', '-')}</span>
                    </dd>
                  </div>
                  {detailDecision && (
                    <div className="fact">
                      <dt>Decision</dt>
                      <dd>{describeDecision(detailDecision)}</dd>
                    </div>
                  )}
                  {detail.event.causationId && (
                    <div className="fact">
                      <dt>Caused by</dt>
                      <CauseOf id={detail.event.causationId} round={roundByEvent.get(detail.event.causationId)} runId={runId} />
                    </div>
                  )}
                </dl>
                {detail.checkpointId && (
                  <div className="pad">
                    <button type="button" className="button primary small" onClick={() => setForkFrom(detail)}>
                      Fork from here
                    </button>
                  </div>
                )}
                <div className="pad">
                  <JsonTree key={detail.event.id} value={detail.event.payload} label="Payload" />
                </div>
              </aside>
            )}
          </div>
        </>
      )}

      {forkFrom?.checkpointId && forkDomain === 'real' && (
        <TaskRunForkDialog
          api={api}
          checkpointId={forkFrom.checkpointId}
          parentRunId={runId}
          at={`the checkpoint at event #${forkFrom.event.seq}`}
          onClose={() => setForkFrom(undefined)}
          onForked={(f) => {
            setForkFrom(undefined);
            navigate({ screen: 'run', runId: f.run.id });
          }}
        />
      )}
      {forkFrom?.checkpointId && forkDomain === 'simulated' && (
        <ForkDialog
          api={api}
          checkpointId={forkFrom.checkpointId}
          parentRunId={runId}
          domain="simulated"
          parentName={ownName}
          onClose={() => setForkFrom(undefined)}
          onForked={(f) => {
            setForkFrom(undefined);
            navigate(f.world.domain === 'real' ? { screen: 'run', runId: f.run.id } : { screen: 'world', runId: f.run.id });
          }}
        />
      )}
    </div>
  );
}

/** placeholderEvent stands for an event whose page is not read yet (its id is empty). */
function placeholderEvent(index: number): TimelineRow['event'] {
  return { id: '', stream: '', seq: 0, pos: index + 1, type: '', schemaVersion: 1, payload: null, reality: 'world_local', recordedAt: '', parentTime: 0, deliberationIndex: 0, worldLocalTime: 0 };
}

/** PendingRow holds the place of a row whose page is being read. */
function PendingRow({ top, index }: { top: number; index: number }) {
  return (
    <div className="tl-row tl-pending" role="row" aria-busy="true" style={{ transform: `translateY(${top}px)`, height: ROW_H }} data-testid="timeline-pending" data-index={index}>
      <span role="cell" className="muted small">
        …
      </span>
    </div>
  );
}

/** CauseOf names what an event was caused by: the round of deliberation that chose a step, or the causing event's id. */
function CauseOf({ id, round, runId }: { id: string; round: DeliberationRound | undefined; runId: string }) {
  if (!round) return <dd className="mono">{shortId(id)}</dd>;
  return (
    <dd data-testid="cause" className="cause">
      <span>
        deliberation round {round.deliberationIndex} at t={round.parentTime} — {roundLine(round)}.{' '}
        <a href={href({ screen: 'world', runId })}>The round on the world</a>
      </span>
    </dd>
  );
}

interface RowProps {
  row: TimelineRow;
  top: number;
  lane: number;
  clock: Clock;
  domain: Domain;
  selected: boolean;
  forkPoint: boolean;
  /** The round of deliberation that chose this step, if one did. */
  round: number | undefined;
  onSelect: () => void;
  onFork: () => void;
}

const Row = memo(function Row({ row: r, top, lane, clock, domain, selected, forkPoint, round, onSelect, onFork }: RowProps) {
  const e = r.event;
  const v = clockValue(e, clock);
  const x = xOnAxis(v, domain, LANE_W);
  const cls = ['tl-row', r.inherited ? 'inherited' : '', r.checkpointId ? 'checkpoint' : '', selected ? 'selected' : '', forkPoint ? 'fork-point' : '']
    .filter(Boolean)
    .join(' ');
  return (
    <div className={cls} role="row" style={{ transform: `translateY(${top}px)`, height: ROW_H }} data-testid="timeline-row" data-seq={e.seq} data-index={r.index} onClick={onSelect}>
      <span role="cell" className="mono num" title={`${e.stream} seq ${e.seq}`}>
        {r.inherited && <span className="inherited-mark" title="inherited from an ancestor" />}
        {r.index + 1}
      </span>
      <span role="cell" className="lane-cell" title={clock === 'recorded' ? formatAbsolute(e.recordedAt) : `${clock} ${v}`}>
        <svg width={LANE_W} height={ROW_H}>
          <line x1={0} x2={LANE_W} y1={ROW_H / 2} y2={ROW_H / 2} className="lane-axis" />
          <circle cx={x} cy={ROW_H / 2} r={r.checkpointId ? 5 : 4} className={`lane-${lane % 6}${r.checkpointId ? ' cp-dot' : ''}`} />
        </svg>
      </span>
      <span role="cell" className="mono muted small">
        {formatAbsolute(e.recordedAt).slice(11, 23)}
      </span>
      <span role="cell" className="mono ellipsis" title={e.type}>
        {e.type}
        {e.reality === 'world_local' && <span className="badge reality-world_local tiny">local</span>}
        {round !== undefined && (
          <span className="badge branch-badge tiny" title={`chosen by deliberation round ${round}`}>
            round {round}
          </span>
        )}
      </span>
      <span role="cell" className="mono ellipsis muted" title={previewPayload(e.payload, 2000)}>
        {r.checkpointId ? (
          <button
            type="button"
            className="button small fork-btn"
            onClick={(ev) => {
              ev.stopPropagation();
              onFork();
            }}
          >
            Fork from here
          </button>
        ) : null}
        {previewPayload(e.payload, 200)}
      </span>
    </div>
  );
});
