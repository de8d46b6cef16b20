import { useState } from 'react';
import { type CopiedLineage, type DatabaseSaved, type DatabaseView, type DucklmApi, type LocalCopy, type LocalDataView, toBridgeError } from '../bridge';
import { BundleReportView } from '../bundles/BundleReport';
import { countsText } from '../bundles/bundle';
import { formatCount, sentence } from '../lib/format';
import './local-data.css';

/** The browser's page cannot start `ducklm serve` again: what the person does instead (as RestartApp says it). */
export const RESTART_IN_BROWSER =
  'ducklm serve cannot restart itself from this page: stop it where it runs (Ctrl+C) and start `ducklm serve` again, then open the new address it prints (its token changes at each start).';

/**
 * RestartControl offers "Restart now" in the desktop window, which quits and
 * starts ducklm again on the same data directory; in a browser it says what
 * to do instead, since the page cannot restart the server that serves it.
 */
export function RestartControl({ api, canRestart }: { api: DucklmApi; canRestart: boolean }) {
  const [state, setState] = useState<{ status: 'idle' } | { status: 'restarting' } | { status: 'failed'; message: string }>({ status: 'idle' });
  if (!canRestart) {
    return (
      <p className="muted small restart-how" data-testid="restart-in-browser">
        {RESTART_IN_BROWSER}
      </p>
    );
  }
  const restart = () => {
    setState({ status: 'restarting' });
    api.restartApp().catch((e: unknown) => setState({ status: 'failed', message: toBridgeError(e).message }));
  };
  return (
    <div className="row restart-now">
      <button type="button" className="button primary small" onClick={restart} disabled={state.status === 'restarting'}>
        {state.status === 'restarting' ? 'Restarting…' : 'Restart now'}
      </button>
      {state.status === 'failed' && (
        <p className="inline-error small" role="alert">
          {sentence(state.message)}
        </p>
      )}
    </div>
  );
}

/** holds says what a local database holds, counted as the Runs list and the Worlds screen count. */
function holds(l: LocalDataView): string {
  const runs = `${formatCount(l.taskRuns)} task run${l.taskRuns === 1 ? '' : 's'}`;
  const worlds = `${formatCount(l.simulatedWorlds)} simulated world${l.simulatedWorlds === 1 ? '' : 's'}`;
  return `It holds ${runs} and ${worlds}.`;
}

/** hasLocalData says whether a team's installation left runs or worlds on this machine. */
export function hasLocalData(view: DatabaseView | undefined): boolean {
  const l = view?.local;
  return !!view?.shared && !!l?.exists && (l.problem !== '' || l.taskRuns + l.simulatedWorlds > 0);
}

type Copying = { status: 'copying' } | { status: 'done'; copy: LocalCopy } | { status: 'failed'; message: string };
type Switching = { status: 'saving' } | { status: 'saved'; saved: DatabaseSaved } | { status: 'failed'; message: string };

interface LocalDataPanelProps {
  api: DucklmApi;
  /** A view of a team's database (shared, with its local data). */
  view: DatabaseView;
  /** Told what "Switch back" saved. */
  onSaved?: (saved: DatabaseSaved) => void;
  /** Offer the restart after "Switch back" (false where the Database field around it offers it). */
  showRestart?: boolean;
}

/**
 * LocalDataPanel is what a team's installation says of this machine's own
 * database: where it is, that ducklm left it as it was and what it holds;
 * "Copy my local runs and worlds to the team database" (each lineage as a
 * bundle, through the import path, with each import's report) and "Switch
 * back to the local database" (for the next start, with the restart).
 */
export function LocalDataPanel({ api, view, onSaved, showRestart = true }: LocalDataPanelProps) {
  const [copying, setCopying] = useState<Copying>();
  const [switching, setSwitching] = useState<Switching>();
  const l = view.local;
  if (!view.shared || !l) return null;

  const copy = () => {
    setCopying({ status: 'copying' });
    api.copyLocalToTeam(`copy-local-${Date.now()}`).then(
      (c) => setCopying({ status: 'done', copy: c }),
      (e: unknown) => setCopying({ status: 'failed', message: toBridgeError(e).message }),
    );
  };
  const switchBack = () => {
    setSwitching({ status: 'saving' });
    api.saveDatabase({ address: '', password: '' }).then(
      (saved) => {
        setSwitching({ status: 'saved', saved });
        onSaved?.(saved);
      },
      (e: unknown) => setSwitching({ status: 'failed', message: toBridgeError(e).message }),
    );
  };
  const copyable = l.exists && l.problem === '' && l.roots > 0;

  return (
    <section className="panel local-data" aria-labelledby="local-data-head" data-testid="local-data">
      <div className="panel-head">
        <h2 id="local-data-head">This machine's data</h2>
      </div>
      <div className="local-data-body">
        <p>
          ducklm now uses the team database <span className="mono">{view.inUse}</span>.{' '}
          {l.exists ? (
            <>
              What you did before is still on this machine, in <span className="mono" data-testid="local-data-path">{l.path}</span>, untouched: ducklm does not
              write to it while the team database is in use.
            </>
          ) : (
            <>
              This data directory has no local database (<span className="mono">{l.path}</span>): nothing was left behind.
            </>
          )}
        </p>
        {l.exists && l.problem === '' && (
          <p className="small" data-testid="local-data-holds">
            {holds(l)}
            {l.unfinished > 0 &&
              ` ${formatCount(l.unfinished)} of its task runs ${l.unfinished === 1 ? 'has' : 'have'} not finished (waiting for an approval, or paused): a run is copied once it has finished on this machine's database.`}
          </p>
        )}
        {l.problem !== '' && (
          <p className="inline-warn small" role="alert">
            It cannot be read, so it cannot be copied: {sentence(l.problem)}
          </p>
        )}
        <div className="row local-data-actions">
          {copyable && (
            <button type="button" className="button primary" onClick={copy} disabled={copying?.status === 'copying'}>
              {copying?.status === 'copying' ? 'Copying…' : 'Copy my local runs and worlds to the team database'}
            </button>
          )}
          {!view.override && (
            <button type="button" className="button" onClick={switchBack} disabled={switching?.status === 'saving' || switching?.status === 'saved'}>
              Switch back to the local database
            </button>
          )}
        </div>
        {copying?.status === 'failed' && (
          <p className="inline-error small" role="alert">
            Nothing more was copied: {sentence(copying.message)}
          </p>
        )}
        {copying?.status === 'done' && <CopyReport copy={copying.copy} />}
        {switching?.status === 'failed' && (
          <p className="inline-error small" role="alert">
            Not switched: {sentence(switching.message)}
          </p>
        )}
        {switching?.status === 'saved' && (
          <>
            <p className="status-note ok small" role="status" data-testid="local-data-switched">
              ✓ {sentence(switching.saved.message)}
            </p>
            {showRestart && <RestartControl api={api} canRestart={view.canRestart} />}
          </>
        )}
      </div>
    </section>
  );
}

/** CopyReport says what a copy did, lineage by lineage, each with its import report. */
function CopyReport({ copy }: { copy: LocalCopy }) {
  return (
    <div className="local-copy" data-testid="local-copy">
      <p className={copy.lineages.every((l) => l.problem === '') ? 'status-note ok small' : 'inline-warn small'} role="status">
        {copy.message}
      </p>
      {copy.lineages.length > 0 && (
        <ul className="local-copy-list">
          {copy.lineages.map((l) => (
            <li key={l.root} data-root={l.root}>
              <span className="local-copy-name">{l.name || l.root}</span> <span className="muted small">({l.domain === 'real' ? 'task run' : 'simulated world'})</span>
              <LineageOutcome lineage={l} />
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

function LineageOutcome({ lineage: l }: { lineage: CopiedLineage }) {
  const r = l.import;
  if (l.problem !== '' || !r.imported) {
    return <p className="inline-warn small">{sentence(l.problem || r.problem || 'It was refused; nothing of it was written.')}</p>;
  }
  return (
    <>
      <p className="small">
        {r.alreadyPresent ? 'Already in the team database: nothing added.' : `Imported: added ${countsText(r.added)}.`}
      </p>
      <details className="local-copy-report">
        <summary>Import report</summary>
        <BundleReportView report={r.report} summary={false} />
      </details>
    </>
  );
}
