import { useEffect } from 'react';
import type { DucklmApi } from '../bridge';
import { ImportButton } from '../bundles/BundleButtons';
import { formatDuration, runDuration } from '../lib/format';
import { shortId } from '../lib/ids';
import { href } from '../lib/route';
import { formatAbsolute, formatRelative } from '../lib/time';
import { RunStatusBadge } from '../ui/StatusBadge';
import { useLoad, useThrottled } from '../ui/useLoad';
import { useNow } from '../ui/useNow';

// Event types that change what the runs list shows.
const RUN_EVENTS = /^(task\.|plan\.|step\.|run\.)/;

/** RunsPanel lists task runs, those waiting for approval first (the backend orders them). */
export function RunsPanel({ api }: { api: DucklmApi }) {
  const [runs, reload] = useLoad(() => api.runs(), [api]);
  const now = useNow(1000);
  const refresh = useThrottled(reload, 500);
  useEffect(() => api.onLedgerEvents((batch) => batch.some((e) => RUN_EVENTS.test(e.type)) && refresh()), [api, refresh]);

  return (
    <section className="panel runs" aria-labelledby="runs-title">
      <header className="panel-head">
        <h2 id="runs-title">Runs</h2>
        {runs.status === 'ready' && runs.value.length > 0 && (
          <span className="panel-meta">
            {runs.value.length} {runs.value.length === 1 ? 'run' : 'runs'}
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
      {runs.value !== undefined && runs.value.length > 0 && (
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
              {runs.value.map((r) => (
                <tr key={r.run.id} className={r.approvals > 0 ? 'needs-you' : undefined} data-testid="run-row">
                  <td>
                    <RunStatusBadge status={r.run.status} />
                  </td>
                  <td className="ellipsis">
                    <a href={href({ screen: 'run', runId: r.run.id })} title={`${r.task}\n${r.run.id}`}>
                      {r.task}
                    </a>
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
        </div>
      )}
    </section>
  );
}
