import { useEffect, useRef, useState } from 'react';
import { type DeliberationCandidate, type DeliberationRound, type DucklmApi, type StepOutcome, toBridgeError } from '../bridge';
import { useOpProgress } from '../bundles/useOpProgress';
import { asGrid } from '../lib/grid';
import { shortId } from '../lib/ids';
import { href } from '../lib/route';
import { SCORE_MEANING, actionText, stopReason } from '../lib/round';
import { JsonTree } from '../ui/JsonTree';
import { alive } from '../workers/model';
import { WhereChoice } from '../workers/WhereChoice';
import { useTeamWorkers } from '../workers/useTeamWorkers';
import { GridView } from './GridView';
import './worlds.css';

interface DeliberateDialogProps {
  api: DucklmApi;
  runId: string;
  worldId: string;
  parentName: string;
  onClose: () => void;
  /** The best action was applied to the run. */
  onApplied: (out: StepOutcome) => void;
}

type Strategy = 'beam' | 'mcts';

interface Field {
  key: 'width' | 'depth' | 'budget' | 'seeds';
  label: string;
  hint: string;
  max: number;
}

const FIELDS: Field[] = [
  { key: 'width', label: 'Beam width', hint: 'nodes kept at each depth', max: 1000 },
  { key: 'depth', label: 'Depth', hint: 'actions a branch may look ahead', max: 200 },
  { key: 'budget', label: 'Budget', hint: 'most branches (forks) to record', max: 100_000 },
  { key: 'seeds', label: 'Seeds', hint: 'K > 1 averages K seeds: an expected score', max: 64 },
];

/** checkOptions names the first option that is not a whole number in its range. */
export function checkOptions(values: Record<Field['key'], string>, strategy: Strategy): string | undefined {
  for (const f of FIELDS) {
    if (f.key === 'width' && strategy !== 'beam') continue;
    const n = Number(values[f.key]);
    if (!Number.isInteger(n) || n < 1 || n > f.max) return `${f.label} is a whole number from 1 to ${f.max}.`;
  }
  return undefined;
}

/**
 * queuedFor is how many branches to keep queued for workers with these
 * slots: enough that none waits for the next job (several a slot), and at
 * most 64, where the queue's own latency stops paying (docs/team-server.md).
 */
export function queuedFor(slots: number): number {
  return Math.min(64, Math.max(8, 4 * slots));
}

function capitalised(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}


/**
 * DeliberateDialog searches forks of the run's world before acting: the
 * search's options, its progress (branches of the budget, branches a second)
 * with Cancel, then the ranked candidates with the best two side by side and
 * "Apply best", which steps the run with the chosen action.
 */
export function DeliberateDialog({ api, runId, worldId, parentName, onClose, onApplied }: DeliberateDialogProps) {
  const [strategy, setStrategy] = useState<Strategy>('beam');
  const shownFields = FIELDS.filter((f) => f.key !== 'width' || strategy === 'beam');
  const [values, setValues] = useState<Record<Field['key'], string>>({ width: '4', depth: '10', budget: '200', seeds: '1' });
  const [op, setOp] = useState('');
  const [started, setStarted] = useState(0);
  const [round, setRound] = useState<DeliberationRound>();
  const [error, setError] = useState<string>();
  // stopped is why a search the user cancelled ended: a status, not an error.
  const [stopped, setStopped] = useState<string>();
  const cancelling = useRef(false);
  const [applying, setApplying] = useState(false);
  const progress = useOpProgress(api, op);
  // Where the branches run: here, or on the team's workers when there are any.
  const [onWorkers, setOnWorkers] = useState(false);
  const [ranOnWorkers, setRanOnWorkers] = useState(false);
  const first = useRef<HTMLButtonElement>(null);
  const running = op !== '';

  useEffect(() => {
    first.current?.focus();
    const onKey = (e: KeyboardEvent) => e.key === 'Escape' && !running && onClose();
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [onClose, running]);

  // The team's workers, read when the dialog opens and again after each round.
  const team = useTeamWorkers(api, !running);
  const workers = alive(team);
  const slots = workers.reduce((n, w) => n + w.slots, 0);
  const useWorkers = onWorkers && workers.length > 0;

  const problem = checkOptions(values, strategy);

  const start = () => {
    if (problem || running) return;
    const id = `deliberate-${runId}-${Date.now()}`;
    setOp(id);
    setStarted(Date.now());
    setRound(undefined);
    setError(undefined);
    setStopped(undefined);
    setRanOnWorkers(useWorkers);
    cancelling.current = false;
    api
      .deliberate({
        runId,
        checkpointId: '',
        strategy,
        width: Number(values.width),
        depth: Number(values.depth),
        budget: Number(values.budget),
        seeds: Number(values.seeds),
        rounds: 1,
        untilDone: false,
        apply: false,
        timeLimitMs: 0,
        op: id,
        ...(useWorkers ? { onWorkers: queuedFor(slots) } : {}),
      })
      .then(
        (res) => {
          setRound(res.rounds[res.rounds.length - 1]);
          if (res.cancelled) setStopped(capitalised(res.cancelled));
        },
        (e: unknown) => {
          const message = toBridgeError(e).message;
          if (cancelling.current) setStopped(capitalised(message));
          else setError(message);
        },
      )
      .finally(() => setOp(''));
  };

  const cancel = () => {
    cancelling.current = true;
    void api.cancelDeliberation(op);
  };

  const apply = () => {
    if (!round) return;
    setApplying(true);
    setError(undefined);
    api.applyDeliberation(runId, round.deliberationIndex).then(onApplied, (e: unknown) => {
      setApplying(false);
      setError(toBridgeError(e).message);
    });
  };

  const elapsed = Math.max(1, Date.now() - started) / 1000;
  const rate = progress ? Math.round(progress.done / elapsed) : 0;

  return (
    <div className="modal-backdrop" onMouseDown={(e) => e.target === e.currentTarget && !running && onClose()}>
      <div className="modal panel deliberate-modal" role="dialog" aria-modal="true" aria-labelledby="deliberate-title">
        <header className="panel-head">
          <h2 id="deliberate-title">Deliberate</h2>
          <span className="panel-meta">{parentName}: search forks of this world, then choose</span>
        </header>
        <div className="modal-body">
          <fieldset className="field" disabled={running}>
            <legend className="field-label">Strategy</legend>
            <div className="segmented">
              {(['beam', 'mcts'] as const).map((s) => (
                <label key={s} className={strategy === s ? 'on' : undefined}>
                  <input type="radio" name="strategy" checked={strategy === s} onChange={() => setStrategy(s)} /> {s === 'beam' ? 'Beam search' : 'Tree search (MCTS)'}
                </label>
              ))}
            </div>
          </fieldset>
          <div className="row wrap">
            {shownFields.map((f) => (
              <label key={f.key} className="inline-field">
                <span>{f.label}</span>
                <input
                  className="input num"
                  value={values[f.key]}
                  disabled={running}
                  onChange={(e) => setValues((v) => ({ ...v, [f.key]: e.target.value }))}
                  aria-label={f.label}
                  aria-describedby={`deliberate-hint-${f.key}`}
                />
              </label>
            ))}
          </div>
          {/* The hints are text, not titles: WebKitGTK drew a title's tooltip over the Seeds field. */}
          <p className="muted small field-hints">
            {shownFields.map((f, i) => (
              <span key={f.key}>
                {i > 0 && ' · '}
                <span id={`deliberate-hint-${f.key}`}>
                  {f.label}: {f.hint}
                </span>
              </span>
            ))}
          </p>
          {problem && <p className="inline-error small">{problem}</p>}
          {team?.shared && (
            <WhereChoice
              what="branches"
              name="where"
              testId="workers-choice"
              disabled={running}
              workers={workers}
              onWorkers={useWorkers}
              onChange={setOnWorkers}
              then={`${queuedFor(slots)} branches are kept queued for them.`}
            />
          )}

          {running && (
            <div className="progress-row" role="status" aria-label="Deliberation progress">
              <progress max={progress?.total ?? Number(values.budget)} value={progress?.done ?? 0} aria-label="Branches recorded" />
              <span className="mono small" data-testid="deliberation-progress">
                {progress
                  ? `${progress.done} of ${progress.total} branches${ranOnWorkers ? ' on workers' : ''} · ${rate}/s · ${progress.total - progress.done} left`
                  : ranOnWorkers
                    ? 'Queuing branches for the workers…'
                    : 'Starting…'}
              </span>
              <button type="button" className="button small" onClick={cancel}>
                Cancel
              </button>
            </div>
          )}
          {error && (
            <p className="inline-error" role="alert">
              {error}
            </p>
          )}
          {stopped && (
            <p className="status-note" role="status" aria-label="Cancelled" data-testid="deliberation-cancelled">
              {stopped}
            </p>
          )}
          {round && <RoundResult round={round} worldId={worldId} onWorkers={ranOnWorkers} />}
        </div>
        <footer className="modal-foot">
          <button type="button" className="button" onClick={onClose} disabled={running}>
            Close
          </button>
          <button ref={first} type="button" className="button" onClick={start} disabled={running || problem !== undefined}>
            {round ? 'Deliberate again' : running ? 'Deliberating…' : 'Deliberate'}
          </button>
          <button type="button" className="button primary" onClick={apply} disabled={!round || running || applying}>
            {applying ? 'Applying…' : round ? `Apply best: ${actionText(round.chosen)}` : 'Apply best'}
          </button>
        </footer>
      </div>
    </div>
  );
}

/** RoundResult is a finished round: what it spent, the ranked candidates, the best two side by side. */
export function RoundResult({ round, worldId, onWorkers }: { round: DeliberationRound; worldId: string; onWorkers: boolean }) {
  const b = round.budget;
  const top = round.candidates.slice(0, 2);
  return (
    <section aria-label="Candidates" className="stack">
      <p className="status-note" data-testid="round-summary">
        Round {round.deliberationIndex} at time {round.parentTime}: {b.used} of {b.branches} branches, {b.steps} steps, {b.deduplicated}{' '}
        {b.deduplicated === 1 ? 'duplicate state' : 'duplicate states'} merged, deepest {b.depth}, {b.wallMs} ms
        {onWorkers ? ", the branches on the team's workers" : ''}. {capitalised(stopReason(b, round.depth, true))}.{' '}
        <a href={href({ screen: 'lineage', select: worldId })}>The search tree in the lineage</a>
      </p>
      <div className="candidate-pair">
        {top.map((c, i) => (
          <CandidateCard key={i} rank={i + 1} c={c} />
        ))}
      </div>
      <p className="muted small" data-testid="score-meaning">
        Scores: {SCORE_MEANING}, at the end of each line (the mean over the seeds).
      </p>
      <table className="data-table candidates-table small">
        <thead>
          <tr>
            <th>#</th>
            <th>Action</th>
            <th>Score</th>
            <th>Mean</th>
            <th>Visits</th>
            <th>Best line</th>
          </tr>
        </thead>
        <tbody>
          {round.candidates.map((c, i) => (
            <tr key={i} className={i === 0 ? 'chosen' : undefined}>
              <td>{i + 1}</td>
              <td className="mono">{actionText(c.action)}</td>
              <td className="mono">{c.failed ? 'failed' : c.score.toFixed(2)}</td>
              <td className="mono">{c.mean.toFixed(2)}</td>
              <td className="mono">{c.visits}</td>
              <td className="mono ellipsis">{c.line.map(actionText).join(' ')}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

function CandidateCard({ rank, c }: { rank: number; c: DeliberationCandidate }) {
  const grid = asGrid(c.state);
  const branch = c.bestBranches[0];
  return (
    <article className="panel candidate" aria-label={`Candidate ${rank}`}>
      <header className="panel-head">
        <h3>
          {rank}. <span className="mono">{actionText(c.action)}</span>
        </h3>
        <span className="panel-meta mono" title={SCORE_MEANING}>
          score {c.failed ? 'failed' : c.score.toFixed(2)}
        </span>
      </header>
      <div className="pad">
        {grid ? <GridView grid={grid} size={180} /> : c.state !== undefined ? <JsonTree value={c.state} label="Best line's end state" /> : null}
        <p className="small">
          Best line: <span className="mono">{c.line.map(actionText).join(' ')}</span>
        </p>
        {c.failed && <p className="inline-error small">{c.failed}</p>}
        {branch && (
          <p className="small muted">
            Best branch <span className="mono">{shortId(branch)}</span>
          </p>
        )}
      </div>
    </article>
  );
}
