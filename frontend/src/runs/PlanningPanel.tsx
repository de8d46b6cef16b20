import type { PlanningAttempt, ReviewRound, Revision } from '../bridge';
import './runs.css';

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

/** A planning round: the first plan, a revision after failed steps, or a review of the results. */
interface Round {
  key: string;
  label: string;
  revision?: Revision;
  review?: ReviewRound;
  attempts: PlanningAttempt[];
}

/** roundsOf groups the attempts by the round they answered, in the order they were asked. */
export function roundsOf(attempts: PlanningAttempt[], revised: Revision[], reviews: ReviewRound[]): Round[] {
  const keyOf = (a: PlanningAttempt) => (a.review ? `review-${a.review}` : a.revision ? `revision-${a.revision}` : 'first');
  const make = (key: string): Round => {
    const [kind, n] = key.split('-');
    const round = Number(n);
    if (kind === 'review') return { key, label: `Review ${round}`, review: reviews.find((r) => r.round === round), attempts: [] };
    if (kind === 'revision') return { key, label: `Revision ${round}`, revision: revised.find((r) => r.round === round), attempts: [] };
    return { key, label: 'First plan', attempts: [] };
  };
  const out: Round[] = [make('first')];
  for (const a of attempts) {
    const key = keyOf(a);
    let r = out.find((x) => x.key === key);
    if (!r) out.push((r = make(key)));
    r.attempts.push(a);
  }
  for (const key of [...revised.map((r) => `revision-${r.round}`), ...reviews.map((r) => `review-${r.round}`)]) {
    if (!out.some((x) => x.key === key)) out.push(make(key));
  }
  return out;
}

/**
 * PlanningPanel shows every answer a planning model gave this run, in order: what was asked
 * (model, options), what came back, what ducklm mended, and why an answer was refused — for a
 * plan revised after failed steps, which steps failed and which were kept; for a review of the
 * results, why it was asked and what it answered.
 */
export function PlanningPanel({
  attempts,
  revised,
  reviews = [],
  open,
}: {
  attempts: PlanningAttempt[];
  revised: Revision[];
  reviews?: ReviewRound[];
  open: boolean;
}) {
  if (attempts.length === 0 && revised.length === 0 && reviews.length === 0) return null;
  const refused = attempts.filter((a) => a.error).length;
  return (
    <details className="panel planning" open={open} data-testid="planning">
      <summary className="panel-head">
        <h2>Planning</h2>
        <span className="panel-meta">
          {attempts.length} {attempts.length === 1 ? 'attempt' : 'attempts'}
          {refused > 0 ? ` · ${refused} refused` : ''}
          {revised.length > 0 ? ` · ${revised.length} ${revised.length === 1 ? 'revision' : 'revisions'}` : ''}
          {reviews.length > 0 ? ` · ${reviews.length} ${reviews.length === 1 ? 'review' : 'reviews'}` : ''}
        </span>
      </summary>
      <ol className="planning-rounds">
        {roundsOf(attempts, revised, reviews).map((round) => (
          <li key={round.key} className="planning-round" aria-label={round.label}>
            {round.revision && (
              <p className="status-note" data-testid={round.key}>
                <strong>{round.label}</strong> (rule <span className="mono">{round.revision.rule}</span>): {round.revision.reason}
                {round.revision.kept.length > 0 && <> Kept as they ran: {round.revision.kept.join(', ')}.</>}
              </p>
            )}
            {round.review && (
              <p className="status-note" data-testid={round.key}>
                <strong>{round.label}</strong>: {round.review.reason}
              </p>
            )}
            {round.attempts.length === 0 && round.key === 'first' && <p className="muted small">The first plan needed no model.</p>}
            <ol className="planning-attempts">
              {round.attempts.map((a) => {
                const o = outcome(a);
                return (
                  <li key={a.attempt} className="planning-attempt" data-testid={`attempt-${a.attempt}`}>
                    <div className="planning-line">
                      <span className="mono">Attempt {a.attempt}</span>
                      <span>{a.model}</span>
                      {optionsText(a.options) && <span className="muted small">{optionsText(a.options)}</span>}
                      <span className={o.className}>{o.text}</span>
                    </div>
                    {a.unstreamed && <p className="muted small">The answer's stream was cut; ducklm asked again without streaming.</p>}
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
        ))}
      </ol>
    </details>
  );
}
