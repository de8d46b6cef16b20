import { useEffect, useMemo, useState } from 'react';
import type { DucklmApi, RunSummary } from '../bridge';
import { ImportButton } from '../bundles/BundleButtons';
import { formatDuration, isTerminal, runDuration } from '../lib/format';
import { shortId } from '../lib/ids';
import { href } from '../lib/route';
import { formatAbsolute, formatRelative } from '../lib/time';
import { RunStatusBadge } from '../ui/StatusBadge';
import { useLoad, useThrottled } from '../ui/useLoad';
import { useRelativeNow } from '../ui/useNow';
import './home.css';

// Event types that change what the runs list shows.
const RUN_EVENTS = /^(task\.|plan\.|step\.|run\.)/;

/** Rows drawn at first, and added by each "Show more": the list ticks every second. */
const RUNS_PAGE = 100;
/** From this many runs on, the list has a filter. */
const FILTER_FROM = 12;

/** matchRun says whether a run's task, id or status contains text (any case). */
function matchRun(r: RunSummary, text: string): boolean {
  const t = text.toLowerCase();
  return r.task.toLowerCase().includes(t) || (r.name ?? '').toLowerCase().includes(t) || r.run.id.includes(t) || r.run.status.replace('_', ' ').includes(t);
}

/** RunsPanel lists task runs, those waiting for approval first (the backend orders them). */
export function RunsPanel({ api }: { api: DucklmApi }) {
  const [runs, reload] = useLoad(() => api.runs(), [api]);
  const refresh = useThrottled(reload, 500);
  useEffect(() => api.onLedgerEvents((batch) => batch.some((e) => RUN_EVENTS.test(e.type)) && refresh()), [api, refresh]);
  const [filter, setFilter] = useState('');
  const [limit, setLimit] = useState(RUNS_PAGE);
  const text = filter.trim();
  const all = runs.value;
  const matching = useMemo(() => (all && text ? all.filter((r) => matchRun(r, text)) : all), [all, text]);
  const shown = matching?.slice(0, limit);
  // Redraw when a shown "started" time reads differently, and every second
  // while a shown run moves (its duration).
  const now = useRelativeNow(
    (shown ?? []).map((r) => r.run.createdAt),
    shown?.some((r) => !isTerminal(r.run.status)) ? 1000 : undefined,
  );

  return (
    <section className="panel runs" aria-labelledby="runs-title">
      <header className="panel-head">
        <h2 id="runs-title">Runs</h2>
        {runs.status === 'ready' && runs.value.length > 0 && (
          <span className="panel-meta">
            {text && matching ? `${matching.length.toLocaleString('en')} of ` : ''}
            {runs.value.length.toLocaleString('en')} {runs.value.length === 1 ? 'run' : 'runs'}
            {runs.value.some((r) => r.approvals > 0) && ', waiting ones first'}
          </span>
        )}
        <ImportButton api={api} onImported={reload} />
        <a className="button small primary" href={href({ screen: 'new' })}>
          New task
        </a>
      </header>
      {runs.status === 'loading' && (
        <p className="loading pad">
          <span className="spinner" aria-hidden="true" /> Reading runs…
        </p>
      )}
      {runs.status === 'error' && runs.value === undefined && (
        <p className="inline-error pad" role="alert">
          {runs.message} <button type="button" className="link-button" onClick={reload}>Try again</button>
        </p>
      )}
      {runs.value !== undefined && runs.value.length === 0 && (
        <p className="empty">No task runs yet. Start one with New task; it appears here with its status.</p>
      )}
      {all !== undefined && all.length >= FILTER_FROM && (
        <div className="list-search">
          <input
            className="input"
            type="search"
            value={filter}
            onChange={(e) => {
              setFilter(e.target.value);
              setLimit(RUNS_PAGE);
            }}
            placeholder="Find a run by task, id or status"
            aria-label="Find a run"
          />
        </div>
      )}
      {matching !== undefined && matching.length === 0 && text !== '' && <p className="empty">No run’s task, id or status contains “{text}”.</p>}
      {shown !== undefined && shown.length > 0 && (
        <div className="table-scroll">
          <table className="data-table runs-table">
            <colgroup>
              <col className="col-status" />
              <col />
              <col className="col-steps" />
              <col className="col-started" />
              <col className="col-duration" />
            </colgroup>
            <thead>
              <tr>
                <th scope="col">Status</th>
                <th scope="col">Task</th>
                <th scope="col" className="num">Steps</th>
                <th scope="col">Started</th>
                <th scope="col" className="num">Duration</th>
              </tr>
            </thead>
            <tbody>
              {shown.map((r) => (
                <tr key={r.run.id} className={r.approvals > 0 ? 'needs-you' : undefined} data-testid="run-row">
                  <td>
                    <RunStatusBadge status={r.run.status} />
                  </td>
                  <td className="ellipsis">
                    <a href={href({ screen: 'run', runId: r.run.id })} title={`${r.name ? `${r.name}\ntask: ` : ''}${r.task}\n${r.run.id}`}>
                      {r.name || r.task}
                    </a>
                    {r.answer && (
                      <span className="run-answer muted small" title={r.answer} data-testid="run-answer-line">
                        {' '}
                        → {r.answer}
                      </span>
                    )}
                    {r.run.baseRunId && (
                      <span className="badge fork-pill" title={`A fork of ${r.run.baseRunId}: the same task with an edited plan`} data-testid="fork-pill">
                        fork of {shortId(r.run.baseRunId)}
                      </span>
                    )}
                    {r.drivenBy && (
                      <span
                        className="badge"
                        title={`Driven by ducklm on ${r.drivenBy}: its steps run there, in its workspace`}
                        data-testid="driven-by"
                      >
                        on {r.drivenBy}
                      </span>
                    )}
                    {r.approvals > 0 && (
                      <span className="badge approvals-pill">
                        {r.approvals} {r.approvals === 1 ? 'approval' : 'approvals'}
                      </span>
                    )}
                    <span className="muted mono small"> {shortId(r.run.id)}</span>
                  </td>
                  <td className="num mono">
                    {r.stepsDone}/{r.steps}
                  </td>
                  <td>
                    <time dateTime={r.run.createdAt} title={formatAbsolute(r.run.createdAt)}>
                      {formatRelative(r.run.createdAt, now)}
                    </time>
                  </td>
                  <td className="num">{formatDuration(runDuration(r.run.createdAt, r.run.updatedAt, r.run.status, now))}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {matching !== undefined && matching.length > shown.length && (
            <div className="pad actions">
              <button type="button" className="button small" onClick={() => setLimit((l) => l + RUNS_PAGE)}>
                Show {Math.min(RUNS_PAGE, matching.length - shown.length)} more of {matching.length.toLocaleString('en')}
              </button>
            </div>
          )}
        </div>
      )}
    </section>
  );
}
