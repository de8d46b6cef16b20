import type { Check, CheckStatus } from '../bridge';
import { FailIcon, OkIcon, WarnIcon } from '../ui/icons';
import type { ChecksState } from './useHome';
import './home.css';

interface ChecksPanelProps {
  state: ChecksState;
  onRerun: () => void;
  /** Checks another panel beside this one already shows (the Ollama check beside Models and sandbox). */
  omit?: (c: Check) => boolean;
}

/** isOllamaCheck picks the doctor's Ollama check (backend/doctor: "Ollama (local models)"). */
export function isOllamaCheck(c: Check): boolean {
  return /^Ollama\b/.test(c.name);
}

const STATUS: Record<CheckStatus, { Icon: typeof OkIcon; label: string }> = {
  ok: { Icon: OkIcon, label: 'OK' },
  warn: { Icon: WarnIcon, label: 'Warning' },
  fail: { Icon: FailIcon, label: 'Failing' },
};

function Summary({ checks }: { checks: Check[] }) {
  const counts = (['ok', 'warn', 'fail'] as const)
    .map((status) => ({ status, n: checks.filter((c) => c.status === status).length }))
    .filter(({ n }) => n > 0);
  const label = counts
    .map(({ status, n }) => `${n} ${STATUS[status].label.toLowerCase()}${status === 'warn' && n !== 1 ? 's' : ''}`)
    .join(', ');
  return (
    <span className="check-summary" role="img" aria-label={label} title={label}>
      {counts.map(({ status, n }) => {
        const { Icon } = STATUS[status];
        return (
          <span key={status} className={`check-summary-item check-${status}`}>
            <Icon className="check-icon" width={13} height={13} />
            {n}
          </span>
        );
      })}
    </span>
  );
}

/** ChecksPanel shows the doctor's checks of this machine, each with its fix. */
export function ChecksPanel({ state, onRerun, omit }: ChecksPanelProps) {
  const shown = state.status === 'ready' && omit ? { ...state, checks: state.checks.filter((c) => !omit(c)) } : state;
  return (
    <section className="panel checks" aria-labelledby="checks-title" aria-busy={state.status === 'loading'}>
      <header className="panel-head">
        <h2 id="checks-title">Machine checks</h2>
        {shown.status === 'ready' && shown.checks.length > 0 && <Summary checks={shown.checks} />}
        <button type="button" className="button small" onClick={onRerun} disabled={state.status === 'loading'}>
          Run again
        </button>
      </header>
      <ul className="check-list">
        {state.status === 'loading' && (
          <li className="check check-loading">
            <span className="spinner" aria-hidden="true" />
            <span>Checking this machine…</span>
          </li>
        )}
        {state.status === 'error' && (
          <li className="check check-fail">
            <FailIcon className="check-icon" />
            <div>
              <div className="check-name">The checks could not run</div>
              <div className="check-detail">{state.message}</div>
            </div>
          </li>
        )}
        {shown.status === 'ready' && shown.checks.length === 0 && (
          <li className="check">
            <span className="check-detail">The backend reported no checks.</span>
          </li>
        )}
        {shown.status === 'ready' &&
          shown.checks.map((c, i) => {
            const status = STATUS[c.status] ?? STATUS.warn;
            return (
              <li className={`check check-${c.status in STATUS ? c.status : 'warn'}`} key={`${i}:${c.name}`}>
                <status.Icon className="check-icon" aria-label={status.label} role="img" aria-hidden={false} />
                <div>
                  <div className="check-name">{c.name}</div>
                  <div className="check-detail">{c.detail}</div>
                  {c.fix && (
                    <div className="check-fix">
                      <span className="check-fix-label">Fix</span> {c.fix}
                    </div>
                  )}
                </div>
              </li>
            );
          })}
      </ul>
    </section>
  );
}
