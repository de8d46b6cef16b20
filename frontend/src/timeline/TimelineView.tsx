import { type Virtualizer, observeElementRect, useVirtualizer } from '@tanstack/react-virtual';
import { memo, useEffect, useMemo, useRef, useState } from 'react';
import type { DucklmApi } from '../bridge';
import { shortId } from '../lib/ids';
import { previewPayload } from '../lib/payload';
import { href } from '../lib/route';
import { formatAbsolute } from '../lib/time';
import {
  CLOCKS,
  type Clock,
  type Domain,
  type Filter,
  NO_FILTER,
  type TimelineRow,
  clockDomain,
  clockValue,
  filterRows,
  lanesOf,
  rowOfSeq,
  typesOf,
  xOnAxis,
} from '../lib/timeline';
import { JsonTree } from '../ui/JsonTree';
import { useLoad } from '../ui/useLoad';
import { navigate } from '../ui/useRoute';
import { ForkDialog } from '../worlds/ForkDialog';
import { useHistory } from './useHistory';

const ROW_H = 28;
const LANE_W = 168;
const FALLBACK = { width: 1000, height: 560 };

/** TimelineView is every event of a run's full history, inherited prefix included, on a chosen clock. */
export function TimelineView({ api, runId, seq }: { api: DucklmApi; runId: string; seq?: number }) {
  const { state, retry } = useHistory(api, runId);
  const [world] = useLoad(() => api.worldDetail(runId), [api, runId]);
  const [clock, setClock] = useState<Clock>('recorded');
  const [filter, setFilter] = useState<Filter>(NO_FILTER);
  const [jump, setJump] = useState(seq ? String(seq) : '');
  const [jumpNote, setJumpNote] = useState<string>();
  const [selected, setSelected] = useState<number>();
  const [forkFrom, setForkFrom] = useState<TimelineRow>();

  const rows = state.status === 'ready' ? state.rows : [];
  const { rows: shown, error: searchError } = useMemo(() => filterRows(rows, filter), [rows, filter]);
  const types = useMemo(() => typesOf(rows), [rows]);
  const lanes = useMemo(() => lanesOf(rows), [rows]);
  const laneOf = useMemo(() => new Map(lanes.map((l) => [l.stream, l.index])), [lanes]);
  const domain = useMemo(() => clockDomain(rows, clock), [rows, clock]);

  const scroller = useRef<HTMLDivElement>(null);
  const atEnd = useRef(true);
  const virtualizer = useVirtualizer({
    count: shown.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => ROW_H,
    overscan: 12,
    getItemKey: (i) => shown[i]!.event.id,
    // A window that is not laid out yet (or jsdom) reports 0×0; draw a screenful anyway.
    observeElementRect: (inst, cb) => observeElementRect(inst, (r) => cb(r.height > 0 ? r : FALLBACK)),
  });

  // Live events keep the view at the end when it was there.
  useEffect(() => {
    if (atEnd.current && shown.length > 0 && selected === undefined) virtualizer.scrollToIndex(shown.length - 1, { align: 'end' });
  }, [shown.length, virtualizer, selected]);

  const doJump = (value: string, v: Virtualizer<HTMLDivElement, Element> = virtualizer) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < 1) {
      setJumpNote('A seq is a whole number from 1.');
      return;
    }
    const i = rowOfSeq(shown, n, runId);
    if (i < 0) {
      setJumpNote(rowOfSeq(rows, n, runId) >= 0 ? `Seq ${n} is hidden by the filters; clear them to see it.` : `This history has no event with seq ${n}.`);
      return;
    }
    setJumpNote(undefined);
    setSelected(shown[i]!.index);
    atEnd.current = false;
    v.scrollToIndex(i, { align: 'center' });
  };

  // A seq in the address is jumped to once the history is in.
  const jumped = useRef(false);
  useEffect(() => {
    if (seq && state.status === 'ready' && !jumped.current) {
      jumped.current = true;
      doJump(String(seq));
    }
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [seq, state.status]);

  const detail = selected !== undefined ? rows[selected] : undefined;
  const w = world.value;
  const ownName = w ? w.world.name || shortId(w.world.id) : shortId(runId);

  return (
    <div className="screen timeline">
      <header className="screen-head">
        <div className="min0">
          <h1 className="ellipsis">Timeline · {ownName}</h1>
          <div className="meta-line">
            <a href={href(w?.world.domain === 'real' ? { screen: 'run', runId } : { screen: 'world', runId })}>back to the {w?.world.domain === 'real' ? 'run' : 'world'}</a>
            {state.status === 'ready' && (
              <span>
                {state.total.toLocaleString()} events, {state.inherited.toLocaleString()} inherited
                {state.capped && ` (first ${rows.length.toLocaleString()} loaded)`}
              </span>
            )}
          </div>
        </div>
      </header>

      {state.status === 'loading' && (
        <div className="loading pad" role="status">
          <span className="spinner" aria-hidden="true" /> Reading the history
          {state.total !== undefined && (
            <>
              : {state.loaded.toLocaleString()} of {state.total.toLocaleString()} events
              <progress max={state.total} value={state.loaded} />
            </>
          )}
          …
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

      {state.status === 'ready' && (
        <>
          <div className="toolbar" role="toolbar" aria-label="Timeline controls">
            <label className="inline-field">
              <span>Swimlanes by</span>
              <select className="input" value={clock} onChange={(e) => setClock(e.target.value as Clock)} aria-label="Clock">
                {CLOCKS.map((c) => (
                  <option key={c.id} value={c.id}>
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
                    {t.type} ({t.count})
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
                doJump(jump);
              }}
            >
              <input className="input num" value={jump} onChange={(e) => setJump(e.target.value)} placeholder="seq" aria-label="Jump to seq" />
              <button type="submit" className="button small">
                Jump
              </button>
            </form>
          </div>
          {(searchError || jumpNote) && (
            <p className="inline-error small" role="alert">
              {searchError ?? jumpNote}
            </p>
          )}
          <div className="lanes-legend small">
            {lanes.map((l) => (
              <span key={l.stream} className={`lane-chip lane-${l.index % 6}`} title={l.stream}>
                <span className="lane-dot" /> {l.inherited ? 'inherited ' : ''}
                {shortId(l.stream)} ({l.events})
              </span>
            ))}
            <span className="muted">
              {shown.length === rows.length ? `${rows.length.toLocaleString()} events` : `${shown.length.toLocaleString()} of ${rows.length.toLocaleString()} events match`}
            </span>
          </div>

          <div className="timeline-body">
            <div className="panel timeline-table" role="table" aria-label="Events" aria-rowcount={shown.length}>
              <div className="tl-row tl-head" role="row">
                <span role="columnheader">Seq</span>
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
                  atEnd.current = el.scrollTop + el.clientHeight >= el.scrollHeight - ROW_H * 2;
                }}
              >
                {shown.length === 0 ? (
                  <p className="empty">{rows.length === 0 ? 'This run has no events yet.' : 'No event matches the filters.'}</p>
                ) : (
                  <div style={{ height: virtualizer.getTotalSize(), position: 'relative' }}>
                    {virtualizer.getVirtualItems().map((item) => {
                      const r = shown[item.index]!;
                      return (
                        <Row
                          key={item.key}
                          row={r}
                          top={item.start}
                          lane={laneOf.get(r.event.stream) ?? 0}
                          clock={clock}
                          domain={domain}
                          selected={selected === r.index}
                          forkPoint={r.index === state.inherited && state.inherited > 0}
                          onSelect={() => setSelected((s) => (s === r.index ? undefined : r.index))}
                          onFork={() => setForkFrom(r)}
                        />
                      );
                    })}
                  </div>
                )}
              </div>
            </div>
            {detail && (
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
                      {shortId(detail.event.stream)} #{detail.event.seq} {detail.inherited && <span className="badge inherited-badge">inherited</span>}
                    </dd>
                  </div>
                  <div className="fact">
                    <dt>Recorded</dt>
                    <dd className="mono">{formatAbsolute(detail.event.recordedAt)}</dd>
                  </div>
                  <div className="fact">
                    <dt>Clocks</dt>
                    <dd className="mono">
                      parent {detail.event.parentTime} · delib {detail.event.deliberationIndex} · local {detail.event.worldLocalTime}
                    </dd>
                  </div>
                  <div className="fact">
                    <dt>Reality</dt>
                    <dd>
                      <span className={`badge reality-${detail.event.reality}`}>{detail.event.reality.replace('_', '-')}</span>
                    </dd>
                  </div>
                  {detail.event.causationId && (
                    <div className="fact">
                      <dt>Caused by</dt>
                      <dd className="mono">{shortId(detail.event.causationId)}</dd>
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

      {forkFrom?.checkpointId && (
        <ForkDialog
          api={api}
          checkpointId={forkFrom.checkpointId}
          parentRunId={runId}
          domain={w?.world.domain ?? (forkFrom.event.reality === 'external_real' ? 'real' : 'simulated')}
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

interface RowProps {
  row: TimelineRow;
  top: number;
  lane: number;
  clock: Clock;
  domain: Domain;
  selected: boolean;
  forkPoint: boolean;
  onSelect: () => void;
  onFork: () => void;
}

const Row = memo(function Row({ row: r, top, lane, clock, domain, selected, forkPoint, onSelect, onFork }: RowProps) {
  const e = r.event;
  const v = clockValue(e, clock);
  const x = xOnAxis(v, domain, LANE_W);
  const cls = ['tl-row', r.inherited ? 'inherited' : '', r.checkpointId ? 'checkpoint' : '', selected ? 'selected' : '', forkPoint ? 'fork-point' : '']
    .filter(Boolean)
    .join(' ');
  return (
    <div className={cls} role="row" style={{ transform: `translateY(${top}px)`, height: ROW_H }} data-testid="timeline-row" data-seq={e.seq} onClick={onSelect}>
      <span role="cell" className="mono num" title={e.stream}>
        {r.inherited && <span className="inherited-mark" title="inherited from an ancestor" />}
        {e.seq}
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
      </span>
      <span role="cell" className="mono ellipsis muted">
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
