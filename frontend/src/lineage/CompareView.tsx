import { type FormEvent, useEffect, useMemo, useRef, useState } from 'react';
import type { BranchDiff, Change, DucklmApi, LedgerEvent, StatesAt } from '../bridge';
import { alignByWorldTime, lastTime } from '../lib/compare';
import { asGrid } from '../lib/grid';
import { GridView } from '../worlds/GridView';
import { changeMarks, compact, diffCounts, expandToChanges } from '../lib/json';
import { shortId } from '../lib/ids';
import { JsonTree } from '../ui/JsonTree';
import { useLoad } from '../ui/useLoad';
import './compare.css';

interface CompareViewProps {
  api: DucklmApi;
  runA: string;
  runB: string;
  labelA: string;
  labelB: string;
  onClose?: () => void;
}

/** CompareView shows two runs side by side after their common history: the state diff and the event diff. */
export function CompareView({ api, runA, runB, labelA, labelB, onClose }: CompareViewProps) {
  const [diff, reload] = useLoad(() => api.diff(runA, runB), [api, runA, runB]);
  // The comparison opens below the graph or the world; bring it into view.
  const self = useRef<HTMLElement>(null);
  // The braces matter: scrollIntoView returns a Promise in current Chromium,
  // and whatever an effect returns React later calls as its cleanup.
  // Focus moves to it too, so the keyboard (and a screen reader) is where
  // the comparison is: Tab reaches Close first.
  useEffect(() => {
    self.current?.scrollIntoView?.({ block: 'start', behavior: 'smooth' });
    self.current?.focus({ preventScroll: true });
  }, [runA, runB]);
  return (
    <section className="panel compare" aria-label="Comparison" data-testid="compare" ref={self} tabIndex={-1}>
      <header className="panel-head">
        <h2>
          Compare <span className="side-a">{labelA}</span> and <span className="side-b">{labelB}</span>
        </h2>
        {diff.value && (
          <span className="panel-meta">
            {diff.value.sharedEvents} shared events
            {diff.value.forkPoint ? `, diverging after ${shortId(diff.value.forkPoint.stream)} #${diff.value.forkPoint.toSeq}` : ', no common history'}
          </span>
        )}
        {onClose && (
          <button type="button" className="button small" onClick={onClose}>
            Close
          </button>
        )}
      </header>
      {diff.status === 'loading' && (
        <p className="loading pad">
          <span className="spinner" aria-hidden="true" /> Comparing the branches…
        </p>
      )}
      {diff.status === 'error' && (
        <p className="inline-error pad" role="alert">
          {diff.message}{' '}
          <button type="button" className="link-button" onClick={reload}>
            Try again
          </button>
        </p>
      )}
      {diff.value && <DiffBody api={api} d={diff.value} labelA={labelA} labelB={labelB} />}
    </section>
  );
}

function DiffBody({ api, d, labelA, labelB }: { api: DucklmApi; d: BranchDiff; labelA: string; labelB: string }) {
  const aligned = useMemo(() => alignByWorldTime(d.eventsA, d.eventsB), [d.eventsA, d.eventsB]);
  // Each latest state is at its branch's own time: say which, so t=10 beside t=15 is not read as the same moment.
  const latestA = lastTime(d.eventsA, aligned.forkAt);
  const latestB = lastTime(d.eventsB, aligned.forkAt);
  // Or both at one world time the user picks (the latest common one to start with).
  const [time, setTime] = useState(() => String(Math.min(latestA ?? 0, latestB ?? 0)));
  const [at, setAt] = useState<{ status: 'loading' } | { status: 'error'; message: string } | { status: 'ready'; value: StatesAt }>();
  const showAt = (e: FormEvent) => {
    e.preventDefault();
    const t = Number(time);
    if (!Number.isInteger(t) || t < 0) {
      setAt({ status: 'error', message: 'A world time is a whole number, 0 or more.' });
      return;
    }
    setAt({ status: 'loading' });
    api.statesAt(d.a, d.b, t).then(
      (value) => setAt({ status: 'ready', value }),
      (err: unknown) => setAt({ status: 'error', message: err instanceof Error ? err.message : String(err) }),
    );
  };
  const chosen = at?.status === 'ready' ? at.value : undefined;
  const stateA = chosen ? chosen.a.state : d.stateA;
  const stateB = chosen ? chosen.b.state : d.stateB;
  const changes: Change[] = chosen ? chosen.changes : d.stateChanges;
  const tA = chosen ? chosen.a.time : latestA;
  const tB = chosen ? chosen.b.time : latestB;
  const marks = useMemo(() => changeMarks(changes), [changes]);
  const open = useMemo(() => expandToChanges(changes, new Set([''])), [changes]);
  const counts = diffCounts(changes);
  const gridA = asGrid(stateA);
  const gridB = asGrid(stateB);
  return (
    <div className="compare-body">
      <h3 className="compare-h">
        State{' '}
        <span className="muted small">
          {changes.length === 0 ? 'identical' : `${counts.changed} changed, ${counts.added} only in ${labelB}, ${counts.removed} only in ${labelA}`}
        </span>
      </h3>
      <form className="compare-at" onSubmit={showAt} aria-label="Compare at a world time">
        <label>
          <span className="field-label">States at world time</span>
          <input
            className="input mono"
            type="number"
            min={0}
            step={1}
            value={time}
            onChange={(e) => setTime(e.target.value)}
            aria-label="World time to compare the states at"
          />
        </label>
        <button type="submit" className="button small" disabled={at?.status === 'loading'}>
          Show both at this time
        </button>
        {at && (
          <button type="button" className="button small" onClick={() => setAt(undefined)}>
            Latest states
          </button>
        )}
        {at?.status === 'loading' && <span className="spinner" aria-label="Reading the states" />}
        {at?.status === 'error' && (
          <span className="inline-error small" role="alert">
            {at.message}
          </span>
        )}
      </form>
      {chosen ? (
        <p className="muted small state-times" data-testid="state-times">
          {chosen.a.time === chosen.at && chosen.b.time === chosen.at
            ? `Both states at world time t=${chosen.at}.`
            : `At world time t=${chosen.at}: ${stoppedAt(labelA, chosen.a.time, chosen.at)}, ${stoppedAt(labelB, chosen.b.time, chosen.at)}.`}
        </p>
      ) : (
        tA !== undefined &&
        tB !== undefined && (
          <p className="muted small state-times" data-testid="state-times">
            Each side's latest state: {labelA} at t={tA}, {labelB} at t={tB}
            {tA !== tB ? ' — different world times, so part of the difference is only time passing.' : ', the same world time.'}
          </p>
        )
      )}
      {changes.length > 0 && (
        <table className="data-table changes" aria-label="State changes">
          <thead>
            <tr>
              <th scope="col">Path</th>
              <th scope="col" className="side-a">
                {labelA}
              </th>
              <th scope="col" className="side-b">
                {labelB}
              </th>
            </tr>
          </thead>
          <tbody>
            {changes.slice(0, 200).map((c) => (
              <tr key={c.path} className={`change-${c.kind}`}>
                <td className="mono">{c.path || '(whole state)'}</td>
                <td className="mono ellipsis">{c.kind === 'added' ? '—' : compact(c.a, 120)}</td>
                <td className="mono ellipsis">{c.kind === 'removed' ? '—' : compact(c.b, 120)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {gridA && gridB && (
        // The world draws its state: the two pictures side by side.
        <div className="side-by-side state-pictures" data-testid="state-pictures">
          <figure className="min0">
            <figcaption className="field-label side-a">
              {labelA} at t={tA}
            </figcaption>
            <GridView grid={gridA} size={220} />
          </figure>
          <figure className="min0">
            <figcaption className="field-label side-b">
              {labelB} at t={tB}
            </figcaption>
            <GridView grid={gridB} size={220} />
          </figure>
        </div>
      )}
      <div className="side-by-side">
        <div className="min0">
          <span className="field-label side-a">{labelA}</span>
          <JsonTree key={`a${tA}`} value={stateA} marks={marks} initiallyExpanded={open} label={`State of ${labelA}`} />
        </div>
        <div className="min0">
          <span className="field-label side-b">{labelB}</span>
          <JsonTree key={`b${tB}`} value={stateB} marks={marks} initiallyExpanded={open} label={`State of ${labelB}`} />
        </div>
      </div>
      <h3 className="compare-h">
        Events after the shared history, from the fork point by world time{' '}
        <span className="muted small" data-testid="event-diff-summary">
          {d.eventsATotal} in {labelA}, {d.eventsBTotal} in {labelB}; {aligned.differing} of {aligned.times} world times differ
          {(d.eventsA.length < d.eventsATotal || d.eventsB.length < d.eventsBTotal) && ` (first ${Math.max(d.eventsA.length, d.eventsB.length)} shown)`}
        </span>
      </h3>
      {aligned.rows.length === 0 ? (
        <p className="muted pad">Neither branch has events past the shared history.</p>
      ) : (
        <div className="table-scroll event-diff-scroll">
          <table className="data-table event-diff" aria-label="Event diff">
            <thead>
              <tr>
                <th scope="col" title="World-local time">
                  t
                </th>
                <th scope="col" className="side-a">
                  {labelA}
                </th>
                <th scope="col" className="side-b">
                  {labelB}
                </th>
              </tr>
            </thead>
            <tbody>
              {aligned.rows.slice(0, 500).map((r, i) => (
                <tr key={i} className={`${r.same ? 'same' : 'differs'}${r.first ? ' time-first' : ''}${r.t === aligned.forkAt && r.first ? ' fork-row' : ''}`}>
                  <th scope="row" className="mono num muted">
                    {r.first ? (r.t === aligned.forkAt ? `${r.t} fork` : r.t) : ''}
                  </th>
                  <td>{r.a ? <EventCell e={r.a} /> : <span className="muted">—</span>}</td>
                  <td>{r.b ? <EventCell e={r.b} /> : <span className="muted">—</span>}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}

/** stoppedAt says a side's time when it is not the one asked: its last step came before. */
function stoppedAt(label: string, t: number, at: number): string {
  return t === at ? `${label} at t=${t}` : `${label} at t=${t}, its last step before t=${at}`;
}

function EventCell({ e }: { e: LedgerEvent }) {
  return (
    <span className="event-cell mono" title={JSON.stringify(e.payload, null, 2)}>
      <span className="muted">#{e.seq}</span> {e.type} <span className="muted ellipsis">{compact(e.payload, 90)}</span>
    </span>
  );
}
