import { useEffect, useMemo, useRef, useState } from 'react';
import { type Checkpoint, type DucklmApi, type VerifyReport, toBridgeError } from '../bridge';
import { useOpProgress } from '../bundles/useOpProgress';
import { alive } from '../workers/model';
import { WhereChoice } from '../workers/WhereChoice';
import { useTeamWorkers } from '../workers/useTeamWorkers';
import { type Cell, asGrid, trailOf } from '../lib/grid';
import { formatBytes, formatCount, worldRunState } from '../lib/format';
import { forkChange } from '../lib/fork';
import { shortId } from '../lib/ids';
import { href } from '../lib/route';
import { formatRelative } from '../lib/time';
import { ExportButton } from '../bundles/BundleButtons';
import { CompareView } from '../lineage/CompareView';
import { JsonTree } from '../ui/JsonTree';
import { OpenFailed, Opening } from '../ui/LoadState';
import { WorldRunBadge } from '../ui/StatusBadge';
import { useLoad, useThrottled } from '../ui/useLoad';
import { useRelativeNow } from '../ui/useNow';
import { navigate } from '../ui/useRoute';
import { DeliberateDialog } from './DeliberateDialog';
import { ForkDialog } from './ForkDialog';
import { BranchesNote } from './BranchesNote';
import { useWorldList } from './useWorldList';
import { GridView } from './GridView';
import { RoundsPanel } from './RoundsPanel';
import './worlds.css';

type Progress = { done: number; total: number } | undefined;

/** WorldView shows one run of a world: its state drawn, stepping with progress, checkpoints, forks and comparisons. */
export function WorldView({ api, runId }: { api: DucklmApi; runId: string }) {
  const [detail, reload] = useLoad(() => api.worldDetail(runId), [api, runId]);
  const [steps, setSteps] = useState('10');
  const [actionText, setActionText] = useState('');
  const [progress, setProgress] = useState<Progress>();
  const [trail, setTrail] = useState<Cell[]>([]);
  const [message, setMessage] = useState<{ kind: 'error' | 'ok'; text: string }>();
  // The checkpoint the Checkpoint button last answered with, marked in the list.
  const [lastTaken, setLastTaken] = useState<string>();
  const [forkFrom, setForkFrom] = useState<Checkpoint>();
  const [verify, setVerify] = useState<VerifyReport | 'running'>();
  const [picked, setPicked] = useState<string[]>([]);
  const [comparing, setComparing] = useState<[string, string]>();
  const [showJson, setShowJson] = useState(false);
  const [deliberating, setDeliberating] = useState(false);
  // Where the steps run: here, or as one job on the team's workers.
  const [onWorkers, setOnWorkers] = useState(false);
  const [workerOp, setWorkerOp] = useState('');
  const workerProgress = useOpProgress(api, workerOp);
  const workerStop = useRef(false);
  const stop = useRef(false);
  // Leaving the screen stops a run of steps between chunks.
  useEffect(
    () => () => {
      stop.current = true;
    },
    [],
  );

  // The team's workers, read when the world opens and again after each run.
  const team = useTeamWorkers(api, detail.value?.world.domain === 'simulated' && workerOp === '');

  const refresh = useThrottled(reload, 300);
  useEffect(
    () =>
      api.onLedgerEvents((batch) => {
        if (progress === undefined && batch.some((e) => e.stream === runId)) refresh();
      }),
    [api, runId, refresh, progress],
  );

  const d = detail.value;
  const now = useRelativeNow(d ? [d.world.createdAt] : []);
  const grid = useMemo(() => asGrid(d?.state), [d?.state]);

  // Its deliberations' branches are forks too, by the hundred: left out
  // unless asked for (the lineage draws them under their rounds).
  const [showBranches, setShowBranches] = useState(false);
  const forks = useWorldList(api, d ? { parent: d.world.id, ...(showBranches ? {} : { withoutBranches: true }), limit: 200 } : null);
  // A fork made elsewhere (the CLI, the timeline) joins the list; its runs move its t=.
  const refreshForks = useThrottled(forks.reload, 1000);
  useEffect(
    () => api.onLedgerEvents((batch) => batch.some((e) => e.type === 'world.forked' || (e.stream !== runId && e.type.startsWith('world.'))) && refreshForks()),
    [api, runId, refreshForks],
  );

  if (detail.status === 'loading') {
    return <Opening what="the world" />;
  }
  if (!d) {
    return (
      <OpenFailed
        title="This world could not be opened"
        message={detail.status === 'error' ? detail.message : ''}
        onRetry={reload}
        backHref={href({ screen: 'worlds' })}
        backLabel="Back to worlds"
      />
    );
  }

  const simulated = d.world.domain === 'simulated';
  const n = Number(steps);
  const stepsOk = Number.isInteger(n) && n >= 1 && n <= 100_000;
  const ended = d.run.status === 'completed' || d.run.status === 'failed' || d.run.status === 'terminated';

  // The run is running while a batch of its steps is computed: this window's, or one the backend reports.
  const stepping = progress !== undefined || workerOp !== '';
  const workers = alive(team);
  const useWorkers = onWorkers && workers.length > 0;

  // On the team's workers the steps go as one job; the progress is how far the run's saved time is.
  const runOnWorkers = async () => {
    const op = `world-run-${runId}-${Date.now()}`;
    const from = d.run.worldLocalTime;
    setMessage(undefined);
    setWorkerOp(op);
    workerStop.current = false;
    try {
      const out = await api.runWorld({ runId, action: actionText.trim(), steps: n, checkpointEvery: 0, onWorkers: true, op });
      const ran = out.run.worldLocalTime - from;
      setMessage({
        kind: 'ok',
        text: `Ran ${ran} ${ran === 1 ? 'step' : 'steps'} on the team's workers${out.done ? ', and the world ended' : ''}: world time ${out.run.worldLocalTime}.`,
      });
    } catch (e) {
      setMessage(
        workerStop.current
          ? { kind: 'ok', text: "Stopped on the team's workers: the run keeps the steps its worker saved." }
          : { kind: 'error', text: toBridgeError(e).message },
      );
    } finally {
      setWorkerOp('');
      reload();
    }
  };

  const runSteps = async () => {
    if (!stepsOk) return;
    if (useWorkers) return runOnWorkers();
    stop.current = false;
    setMessage(undefined);
    // Steps go in chunks so the picture and the progress bar move, and Stop is honoured between chunks.
    const chunk = Math.max(1, Math.min(200, Math.ceil(n / 25)));
    let done = 0;
    setProgress({ done, total: n });
    try {
      while (done < n && !stop.current) {
        const k = Math.min(chunk, n - done);
        const out = await api.runWorld({ runId, action: actionText.trim(), steps: k, checkpointEvery: 0 });
        done += k;
        setTrail((t) => [...t, ...trailOf(out.emitted)].slice(-400));
        setProgress({ done, total: n });
        if (out.done) {
          setMessage({ kind: 'ok', text: `The world ended after ${done} ${done === 1 ? 'step' : 'steps'}.` });
          break;
        }
        if (done < n) reload();
      }
      if (stop.current && done < n) setMessage({ kind: 'ok', text: `Stopped after ${done} of ${n} steps.` });
    } catch (e) {
      setMessage({ kind: 'error', text: toBridgeError(e).message });
    } finally {
      setProgress(undefined);
      reload();
    }
  };

  const checkpoint = () => {
    setMessage(undefined);
    const known = new Set(detail.value?.checkpoints.map((c) => c.id));
    api.checkpointWorld(runId).then(
      (cp) => {
        // A world that has not moved since its newest checkpoint already has it: nothing new is taken.
        setMessage({
          kind: 'ok',
          text: known.has(cp.id)
            ? `Nothing new to take: the world has not moved since checkpoint ${shortId(cp.id)} at world time ${cp.worldLocalTime} (marked below).`
            : `Checkpoint ${shortId(cp.id)} taken at world time ${cp.worldLocalTime} (marked below).`,
        });
        setLastTaken(cp.id);
        reload();
      },
      (e: unknown) => setMessage({ kind: 'error', text: toBridgeError(e).message }),
    );
  };

  const runVerify = () => {
    setVerify('running');
    api.verify(runId).then(setVerify, (e: unknown) => {
      setVerify(undefined);
      setMessage({ kind: 'error', text: toBridgeError(e).message });
    });
  };

  const togglePick = (id: string) => setPicked((p) => (p.includes(id) ? p.filter((x) => x !== id) : [...p, id].slice(-2)));
  const labelOf = (id: string) =>
    id === runId ? d.world.name || 'this world' : (forks.items.find((c) => c.latestRun?.id === id)?.name ?? shortId(id));

  return (
    <div className="screen world-view">
      <header className="screen-head run-head">
        <div className="min0">
          <h1 className="ellipsis">{d.world.name || shortId(d.world.id)}</h1>
          <div className="meta-line">
            <WorldRunBadge state={worldRunState({ ...d.run, stepping: stepping || d.stepping === true }, d.world.domain)} />
            <span className="mono" title={d.world.id}>
              {shortId(d.world.id)}
            </span>
            <span>seed {d.world.seed}</span>
            <span>world time {d.run.worldLocalTime}</span>
            {d.fork && (
              <span>
                forked by <code>{d.fork.divergence}</code> from{' '}
                <a href={href({ screen: 'world', runId: d.fork.parentRunId })} className="mono">
                  {shortId(d.fork.parentWorldId)}
                </a>
              </span>
            )}
            {d.fork && (
              <span data-testid="world-fork-change" title={`${d.fork.divergence}: ${JSON.stringify(d.fork.delta ?? {})}`}>
                changed <code>{forkChange(d.fork.delta, d.fork.seedPolicy)}</code>
              </span>
            )}
            <span>created {formatRelative(d.world.createdAt, now)}</span>
          </div>
        </div>
        <div className="head-actions">
          <a className="button small" href={href({ screen: 'timeline', runId, world: true })}>
            Timeline
          </a>
          <a className="button small" href={href({ screen: 'lineage', select: d.world.id })}>
            Lineage
          </a>
          <ExportButton api={api} root={d.world.id} kind="world" name={d.world.name || shortId(d.world.id)} forked={Boolean(d.world.parentWorldId)} />
          {simulated && (
            <button type="button" className="button small" onClick={runVerify} disabled={verify === 'running'}>
              {verify === 'running' ? 'Replaying…' : 'Verify replay'}
            </button>
          )}
        </div>
      </header>

      {verify && verify !== 'running' && (
        <p className={verify.ok ? 'status-note ok' : 'inline-error'} role="status">
          {verify.ok
            ? `Replay matches the record: ${verify.events} events, ${verify.steps} steps, ${verify.checkpoints} checkpoints.`
            : `Replay differs: ${verify.divergence?.message ?? 'at an unknown event'}.`}
        </p>
      )}
      {message && (
        <p className={message.kind === 'error' ? 'inline-error' : 'status-note'} role={message.kind === 'error' ? 'alert' : 'status'}>
          {message.text}
        </p>
      )}

      <div className="world-body">
        <div className="world-main">
          <section className="panel state-panel" aria-label="State">
            <header className="panel-head">
              <h2>State</h2>
              {grid && (
                <span className="panel-meta">
                  agent at {grid.pos[0]},{grid.pos[1]} · goal {grid.goal[0]},{grid.goal[1]}
                  {grid.steps !== undefined ? ` · ${grid.steps} steps` : ''}
                  {grid.done ? ' · goal reached' : ''}
                </span>
              )}
              {grid && (
                <button type="button" className="button small" onClick={() => setShowJson((v) => !v)}>
                  {showJson ? 'Picture' : 'JSON'}
                </button>
              )}
            </header>
            <div className="state-body">
              {d.state === undefined ? (
                <p className="muted">This world has no state to draw (a task run keeps its state in its steps).</p>
              ) : grid && !showJson ? (
                <GridView grid={grid} trail={trail} />
              ) : (
                <JsonTree key={`${runId}`} value={d.state} label="World state" />
              )}
            </div>
          </section>
          {simulated && <RoundsPanel api={api} runId={runId} worldId={d.world.id} />}
        </div>

        <div className="world-side">
          {simulated && (
            <section className="panel" aria-label="Run steps">
              <header className="panel-head">
                <h2>Run</h2>
              </header>
              <div className="pad stack">
                <div className="row wrap">
                  <label className="inline-field">
                    <span>Steps</span>
                    <input className="input num" value={steps} onChange={(e) => setSteps(e.target.value)} aria-label="Steps to run" aria-invalid={!stepsOk} />
                  </label>
                  <label className="inline-field grow">
                    <span>Action</span>
                    <input
                      className="input mono"
                      value={actionText}
                      onChange={(e) => setActionText(e.target.value)}
                      placeholder='blank: the program chooses, or "E"'
                      aria-label="Action (JSON)"
                    />
                  </label>
                </div>
                {!stepsOk && <p className="inline-error small">Steps is a whole number from 1 to 100000.</p>}
                {team?.shared && (
                  <WhereChoice
                    what="steps"
                    name="run-where"
                    testId="run-workers-choice"
                    disabled={progress !== undefined || workerOp !== ''}
                    workers={workers}
                    onWorkers={useWorkers}
                    onChange={setOnWorkers}
                    then="the steps go to one of them as one job."
                  />
                )}
                {workerOp !== '' ? (
                  <div className="progress-row" role="status" aria-label="Run progress">
                    <progress max={workerProgress?.total ?? n} value={workerProgress?.done ?? 0} aria-label="Steps run on workers" />
                    <span className="mono small" data-testid="run-workers-progress">
                      {workerProgress && workerProgress.done > 0
                        ? `${workerProgress.done}/${workerProgress.total} steps on the team's workers`
                        : "Queued for the team's workers…"}
                    </span>
                    <button
                      type="button"
                      className="button small"
                      onClick={() => {
                        workerStop.current = true;
                        void api.cancelWorldRun(workerOp);
                      }}
                    >
                      Stop
                    </button>
                  </div>
                ) : progress ? (
                  <div className="progress-row">
                    <progress max={progress.total} value={progress.done} aria-label="Steps run" />
                    <span className="mono small">
                      {progress.done}/{progress.total}
                    </span>
                    <button type="button" className="button small" onClick={() => (stop.current = true)}>
                      Stop
                    </button>
                  </div>
                ) : (
                  <div className="row wrap">
                    <button type="button" className="button primary" onClick={() => void runSteps()} disabled={!stepsOk || ended}>
                      Run {stepsOk ? n : ''} {n === 1 ? 'step' : 'steps'}
                    </button>
                    <button type="button" className="button" onClick={checkpoint} disabled={progress !== undefined}>
                      Checkpoint
                    </button>
                    <button
                      type="button"
                      className="button"
                      onClick={() => setDeliberating(true)}
                      disabled={ended}
                      title="Search forks of this world for the best next action (the program must define actions and score)"
                    >
                      Deliberate…
                    </button>
                  </div>
                )}
                {d.run.status === 'failed' && d.run.error && (
                  <p className="inline-error small" data-testid="run-error">
                    {d.run.error}
                  </p>
                )}
                {ended && <p className="muted small">This run has {d.run.status === 'completed' ? 'ended' : d.run.status}; fork a checkpoint to go on differently.</p>}
                {d.limits && (
                  <p className="muted small" data-testid="world-limits">
                    Each call of its program: at most {formatCount(d.limits.maxSteps)} execution steps, {formatBytes(d.limits.maxStateBytes)} of state and{' '}
                    {formatBytes(d.limits.maxMemoryBytes)} of memory (<a href={href({ screen: 'settings' })}>Settings</a>).
                  </p>
                )}
              </div>
            </section>
          )}

          <section className="panel" aria-labelledby="cp-title">
            <header className="panel-head">
              <h2 id="cp-title">Checkpoints</h2>
              <span className="panel-meta">{d.checkpoints.length}</span>
            </header>
            {d.checkpoints.length === 0 ? (
              <p className="muted pad">None yet. Take one to fork from this point.</p>
            ) : (
              <ul className="cp-list">
                {[...d.checkpoints].reverse().map((cp) => (
                  <li key={cp.id} className={`cp-item${cp.id === lastTaken ? ' cp-last' : ''}`} data-testid="checkpoint" aria-current={cp.id === lastTaken ? 'true' : undefined}>
                    <span className="mono" title="World time">
                      t={cp.worldLocalTime}
                    </span>
                    <span className="mono small ellipsis" title={`Checkpoint ${cp.id}, after event #${cp.ledgerSeq} of the run; its state's digest ${cp.blob.digest}`}>
                      {shortId(cp.id)}
                    </span>
                    <span className="muted small mono" title="The run's event it was taken after">
                      #{cp.ledgerSeq}
                    </span>
                    <button type="button" className="button small" onClick={() => setForkFrom(cp)}>
                      Fork…
                    </button>
                  </li>
                ))}
              </ul>
            )}
          </section>

          <section className="panel" aria-labelledby="children-title">
            <header className="panel-head">
              <h2 id="children-title">Forks of this world</h2>
              <span className="panel-meta">{forks.total > 0 ? forks.total : ''}</span>
              <button
                type="button"
                className="button small"
                disabled={picked.length !== 2}
                onClick={() => picked.length === 2 && setComparing([picked[0]!, picked[1]!])}
              >
                Compare {picked.length}/2
              </button>
            </header>
            <ul className="cp-list">
              <li className="cp-item">
                <label className="check-row grow">
                  <input type="checkbox" checked={picked.includes(runId)} onChange={() => togglePick(runId)} /> this world
                </label>
              </li>
              {forks.items.map((c) => (
                <li key={c.id} className="cp-item">
                  {c.latestRun ? (
                    <label className="check-row grow min0">
                      <input type="checkbox" checked={picked.includes(c.latestRun.id)} onChange={() => togglePick(c.latestRun!.id)} />
                      <span className="ellipsis">{c.name || shortId(c.id)}</span>
                    </label>
                  ) : (
                    <span className="grow ellipsis">{c.name || shortId(c.id)}</span>
                  )}
                  {c.latestRun?.deliberationIndex ? (
                    <span className="badge branch-badge" title={`A branch that deliberation round ${c.latestRun.deliberationIndex} searched, from t=${c.fork?.at ?? 0}`}>
                      round {c.latestRun.deliberationIndex}
                    </span>
                  ) : (
                    c.fork && (
                      <code className="small" title={`forked at t=${c.fork.at}`}>
                        {c.fork.divergence}
                      </code>
                    )
                  )}
                  {c.latestRun && (
                    <a className="button small" href={href({ screen: 'world', runId: c.latestRun.id })}>
                      Open
                    </a>
                  )}
                </li>
              ))}
            </ul>
            {forks.hasMore && (
              <div className="pad">
                <button type="button" className="button small" disabled={forks.loadingMore} onClick={forks.more}>
                  {forks.loadingMore ? 'Reading…' : `Show more forks (${forks.total - forks.items.length} left)`}
                </button>
              </div>
            )}
            {forks.status === 'ready' && (
              <BranchesNote shown={showBranches} left={forks.branches} text="" testId="fork-branches-note" onToggle={() => setShowBranches(!showBranches)} />
            )}
            {forks.error && <p className="inline-error pad small">{forks.error}</p>}
          </section>

          {d.runs.length > 1 && (
            <section className="panel" aria-label="Runs of this world">
              <header className="panel-head">
                <h2>Runs of this world</h2>
              </header>
              <ul className="cp-list">
                {d.runs.map((r) => (
                  <li key={r.id} className="cp-item">
                    <a href={href({ screen: 'world', runId: r.id })} className="mono">
                      {shortId(r.id)}
                    </a>
                    <WorldRunBadge state={worldRunState({ ...r, stepping: r.id === runId && (stepping || d.stepping === true) }, d.world.domain)} />
                    <span className="muted small">t={r.worldLocalTime}</span>
                  </li>
                ))}
              </ul>
            </section>
          )}
        </div>
      </div>

      {comparing && (
        <CompareView api={api} runA={comparing[0]} runB={comparing[1]} labelA={labelOf(comparing[0])} labelB={labelOf(comparing[1])} onClose={() => setComparing(undefined)} />
      )}

      {deliberating && (
        <DeliberateDialog
          api={api}
          runId={runId}
          worldId={d.world.id}
          parentName={d.world.name || shortId(d.world.id)}
          onClose={() => {
            setDeliberating(false);
            forks.reload();
          }}
          onApplied={(out) => {
            setDeliberating(false);
            setTrail((t) => [...t, ...trailOf(out.emitted)].slice(-400));
            setMessage({ kind: 'ok', text: `Applied the deliberation's choice: world time ${out.run.worldLocalTime}${out.done ? ', the world ended' : ''}.` });
            forks.reload();
            reload();
          }}
        />
      )}

      {forkFrom && (
        <ForkDialog
          api={api}
          checkpointId={forkFrom.id}
          parentRunId={runId}
          domain={d.world.domain}
          parentName={d.world.name || shortId(d.world.id)}
          onClose={() => setForkFrom(undefined)}
          onForked={(f) => {
            setForkFrom(undefined);
            forks.reload();
            navigate({ screen: 'world', runId: f.run.id });
          }}
        />
      )}
    </div>
  );
}
