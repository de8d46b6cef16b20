import type { DucklmApi } from '../bridge';
import { sentence } from '../lib/format';
import { FailIcon, OkIcon, WarnIcon } from '../ui/icons';
import { useLoad } from '../ui/useLoad';
import './home.css';

/** SystemPanel says whether Ollama answers (and with which models) and whether steps run sandboxed, each problem with its fix. */
export function SystemPanel({ api }: { api: DucklmApi }) {
  const [info, reload] = useLoad(() => api.models(), [api]);
  return (
    <section className="panel system" aria-labelledby="system-title" aria-busy={info.status === 'loading'}>
      <header className="panel-head">
        <h2 id="system-title">Models and sandbox</h2>
        <button type="button" className="button small" onClick={reload} disabled={info.status === 'loading'}>
          Check again
        </button>
      </header>
      <ul className="check-list">
        {info.status === 'loading' && (
          <li className="check check-loading">
            <span className="spinner" aria-hidden="true" />
            <span>Asking Ollama…</span>
          </li>
        )}
        {info.status === 'error' && (
          <li className="check check-fail">
            <FailIcon className="check-icon" />
            <div>
              <div className="check-name">Model status is unknown</div>
              <div className="check-detail">{info.message}</div>
            </div>
          </li>
        )}
        {info.value && (
          <>
            <li className={`check check-${info.value.reachable ? (info.value.models.length > 0 ? 'ok' : 'warn') : 'warn'}`} data-testid="ollama-status">
              {info.value.reachable && info.value.models.length > 0 ? <OkIcon className="check-icon" /> : <WarnIcon className="check-icon" />}
              <div className="min0">
                <div className="check-name">Ollama</div>
                {info.value.reachable ? (
                  <>
                    <div className="check-detail">
                      Answering at <span className="mono">{info.value.host}</span> with {info.value.models.length}{' '}
                      {info.value.models.length === 1 ? 'model' : 'models'}.
                    </div>
                    {info.value.models.length > 0 ? (
                      <ul className="chips" aria-label="Ollama models">
                        {info.value.models.map((m) => (
                          <li key={m} className="chip mono">
                            {m}
                          </li>
                        ))}
                      </ul>
                    ) : (
                      <div className="check-fix">
                        <span className="check-fix-label">Fix</span> ollama pull &lt;model&gt; (until then runs use the offline planner)
                      </div>
                    )}
                  </>
                ) : (
                  <>
                    <div className="check-detail">
                      {sentence(info.value.error ?? `Ollama does not answer at ${info.value.host}`)} Runs use the offline planner; explicit plans and worlds work.
                    </div>
                    <div className="check-fix">
                      <span className="check-fix-label">Fix</span> start it with ollama serve, or set OLLAMA_HOST
                    </div>
                  </>
                )}
              </div>
            </li>
            <li className={`check check-${info.value.sandboxed ? 'ok' : 'warn'}`} data-testid="sandbox-status">
              {info.value.sandboxed ? <OkIcon className="check-icon" /> : <WarnIcon className="check-icon" />}
              <div>
                <div className="check-name">Sandbox</div>
                {info.value.sandboxed ? (
                  <div className="check-detail">Shell steps and scripts run under bubblewrap: read-only system, writable workspace, no network unless approved.</div>
                ) : (
                  <>
                    <div className="check-detail">No sandbox: every shell step waits for your approval.</div>
                    <div className="check-fix">
                      <span className="check-fix-label">Fix</span> install bubblewrap (apt install bubblewrap), then restart ducklm
                    </div>
                  </>
                )}
              </div>
            </li>
          </>
        )}
      </ul>
    </section>
  );
}
