import type { PlanningAttempt, Revision } from '../bridge';

/** optionsText says how an attempt differed from the first: "temperature 0.3, seed 1". */
export function optionsText(options: Record<string, unknown> | undefined): string {
  if (!options) return '';
  return Object.entries(options)
    .map(([k, v]) => `${k} ${typeof v === 'number' ? String(Math.round(v * 100) / 100) : JSON.stringify(v)}`)
    .join(', ');
}

function outcome(a: PlanningAttempt): { text: string; className: string } {
  if (a.accepted) return { text: 'accepted', className: 'badge status step-done' };
  if (a.error) return { text: 'refused', className: 'badge status step-failed' };
  return { text: 'answered', className: 'badge' };
}

/**
 * PlanningPanel shows every answer a planning model gave this run, in order: what was asked
 * (model, options), what came back, what ducklm mended, and why an answer was refused — and,
 * for a plan revised after failed steps, which steps failed and which were kept.
 */
export function PlanningPanel({ attempts, revised, open }: { attempts: PlanningAttempt[]; revised: Revision[]; open: boolean }) {
  if (attempts.length === 0 && revised.length === 0) return null;
  const rounds = [0, ...revised.map((r) => r.round)];
  const refused = attempts.filter((a) => a.error).length;
  return (
    <details className="panel planning" open={open} data-testid="planning">
      <summary className="panel-head">
        <h2>Planning</h2>
        <span className="panel-meta">
          {attempts.length} {attempts.length === 1 ? 'attempt' : 'attempts'}
          {refused > 0 ? ` · ${refused} refused` : ''}
          {revised.length > 0 ? ` · ${revised.length} ${revised.length === 1 ? 'revision' : 'revisions'}` : ''}
        </span>
      </summary>
      <ol className="planning-rounds">
        {rounds.map((round) => {
          const rev = revised.find((r) => r.round === round);
          const mine = attempts.filter((a) => (a.revision ?? 0) === round);
          return (
            <li key={round} className="planning-round" aria-label={round === 0 ? 'First plan' : `Revision ${round}`}>
              {rev && (
                <p className="status-note" data-testid={`revision-${round}`}>
                  <strong>Revision {round}</strong> (rule <span className="mono">{rev.rule}</span>): {rev.reason}
                  {rev.kept.length > 0 && <> Kept as they ran: {rev.kept.join(', ')}.</>}
                </p>
              )}
              {mine.length === 0 && round === 0 && <p className="muted small">The first plan needed no model.</p>}
              <ol className="planning-attempts">
                {mine.map((a) => {
                  const o = outcome(a);
                  return (
                    <li key={a.attempt} className="planning-attempt" data-testid={`attempt-${a.attempt}`}>
                      <div className="planning-line">
                        <span className="mono">Attempt {a.attempt}</span>
                        <span>{a.model}</span>
                        {optionsText(a.options) && <span className="muted small">{optionsText(a.options)}</span>}
                        <span className={o.className}>{o.text}</span>
                      </div>
                      {a.error && <p className="inline-error small">{a.error}</p>}
                      {a.normalised && a.normalised.length > 0 && (
                        <ul className="planning-mended small" aria-label="What ducklm mended">
                          {a.normalised.map((n) => (
                            <li key={n}>Mended: {n}</li>
                          ))}
                        </ul>
                      )}
                      <details>
                        <summary className="small">The model's answer</summary>
                        <pre className="code-block">{a.answer || '(empty)'}</pre>
                      </details>
                    </li>
                  );
                })}
              </ol>
            </li>
          );
        })}
      </ol>
    </details>
  );
}
