import { useEffect, useMemo, useRef } from 'react';
import type { BranchDiff, DucklmApi, LedgerEvent } from '../bridge';
import { alignByWorldTime, lastTime } from '../lib/compare';
import { asGrid } from '../lib/grid';
import { GridView } from '../worlds/GridView';
import { changeMarks, compact, diffCounts, expandToChanges } from '../lib/json';
import { shortId } from '../lib/ids';
import { JsonTree } from '../ui/JsonTree';
import { useLoad } from '../ui/useLoad';

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
  useEffect(() => {
    self.current?.scrollIntoView?.({ block: 'start', behavior: 'smooth' });
  }, [runA, runB]);
  return (
    <section className="panel compare" aria-label="Comparison" data-testid="compare" ref={self}>
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
      {diff.value && <DiffBody d={diff.value} labelA={labelA} labelB={labelB} />}
    </section>
  );
}

function DiffBody({ d, labelA, labelB }: { d: BranchDiff; labelA: string; labelB: string }) {
  const marks = useMemo(() => changeMarks(d.stateChanges), [d.stateChanges]);
  const open = useMemo(() => expandToChanges(d.stateChanges, new Set([''])), [d.stateChanges]);
  const counts = diffCounts(d.stateChanges);
  const aligned = useMemo(() => alignByWorldTime(d.eventsA, d.eventsB), [d.eventsA, d.eventsB]);
  // Each state is the branch's latest: say at which world time, so t=10 beside t=15 is not read as the same moment.
  const tA = lastTime(d.eventsA, aligned.forkAt);
  const tB = lastTime(d.eventsB, aligned.forkAt);
  const gridA = asGrid(d.stateA);
  const gridB = asGrid(d.stateB);
  return (
    <div className="compare-body">
      <h3 className="compare-h">
        State{' '}
        <span className="muted small">
          {d.stateChanges.length === 0
            ? 'identical'
            : `${counts.changed} changed, ${counts.added} only in ${labelB}, ${counts.removed} only in ${labelA}`}
        </span>
      </h3>
      {tA !== undefined && tB !== undefined && (
        <p className="muted small state-times" data-testid="state-times">
          Each side's latest state: {labelA} at t={tA}, {labelB} at t={tB}
          {tA !== tB ? ' — different world times, so part of the difference is only time passing.' : ', the same world time.'}
        </p>
      )}
      {d.stateChanges.length > 0 && (
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
            {d.stateChanges.slice(0, 200).map((c) => (
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
          <JsonTree value={d.stateA} marks={marks} initiallyExpanded={open} label={`State of ${labelA}`} />
        </div>
        <div className="min0">
          <span className="field-label side-b">{labelB}</span>
          <JsonTree value={d.stateB} marks={marks} initiallyExpanded={open} label={`State of ${labelB}`} />
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

function EventCell({ e }: { e: LedgerEvent }) {
  return (
    <span className="event-cell mono" title={JSON.stringify(e.payload, null, 2)}>
      <span className="muted">#{e.seq}</span> {e.type} <span className="muted ellipsis">{compact(e.payload, 90)}</span>
    </span>
  );
}
