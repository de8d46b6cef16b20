import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { type DucklmApi, type RunDetail, toBridgeError } from '../bridge';
import { ExportButton } from '../bundles/BundleButtons';
import { formatDuration, isTerminal, runDuration, sentence, waitingFor } from '../lib/format';
import { shortId } from '../lib/ids';
import { href } from '../lib/route';
import { APPROVAL_EVENTS, approvalHistory } from '../lib/approvalHistory';
import { searchWhole } from '../lib/timelinePages';
import { buildRunGraph, stepCounts } from '../lib/runGraph';
import { deniedSteps, forkName, needsModel, planText } from '../lib/runStory';
import { formatAbsolute, formatRelative } from '../lib/time';
import { type TokenStreams, appendTokens } from '../lib/tokens';
import { OpenFailed, Opening } from '../ui/LoadState';
import { RunStatusBadge } from '../ui/StatusBadge';
import { useLoad, useThrottled } from '../ui/useLoad';
import { useRelativeNow } from '../ui/useNow';
import { navigate } from '../ui/useRoute';
import { ApprovalCard } from './ApprovalCard';
import { PlanForkDialog } from './PlanForkDialog';
import { PlanningPanel } from './PlanningPanel';
import { RunGraph } from './RunGraph';
import { StepPanel } from './StepPanel';
import { DeliberateDialog } from '../worlds/DeliberateDialog';
import type { SearchSummary } from '../lib/search';
import './runs.css';

/** RunView shows one task run live: its graph, the open approvals, the selected step, and streamed model text. */
export function RunView({ api, runId }: { api: DucklmApi; runId: string }) {
  // A reading folded to an older seq than the one shown is kept out: the view never steps back
  // (an approval card that vanished for one refresh under load, then came back, lost its place).
  const newest = useRef<RunDetail | undefined>(undefined);
  const [detail, reload] = useLoad(
    () =>
      api.runDetail(runId).then((d) => {
        const prev = newest.current;
        if (prev && prev.run.id === d.run.id && (prev.state?.seq ?? -1) > (d.state?.seq ?? -1)) return prev;
        newest.current = d;
        return d;
      }),
    [api, runId],
  );
  const [rules] = useLoad(() => api.riskRules(), [api]);
  const shot = useCallback((stepId: string) => api.stepScreenshot(runId, stepId), [api, runId]);
  const image = useCallback((stepId: string, index: number) => api.stepImage(runId, stepId, index), [api, runId]);
  const [tokens, setTokens] = useState<TokenStreams>({});
  const [selected, setSelected] = useState<string>();
  const [action, setAction] = useState<{ busy: boolean; error?: string }>({ busy: false });
  const [forking, setForking] = useState(false);
  // The world_search step whose world is being deliberated on again.
  const [deliberating, setDeliberating] = useState<SearchSummary>();
  // A run paused for a model can go on only when one is reachable: ask Ollama, and again after each change.
  const waitsForModel = needsModel(detail.value?.state);
  const [models, reloadModels] = useLoad(() => (waitsForModel ? api.models() : Promise.resolve(undefined)), [api, waitsForModel]);
  // A fork's title is its own name (the parent's task stays below it).
  const forkOf = detail.value?.run.baseRunId;
  // A step's approval history is in the run's events: read them for the step shown, again when it moves on.
  const [shownId, setShownId] = useState<string>();
  const shownStep = shownId ? detail.value?.state?.steps[shownId] : undefined;
  // A step of a run that ended may have asked and never been answered (its request closed with the run).
  const ended = detail.value !== undefined && isTerminal(detail.value.state?.status ?? detail.value.run.status);
  const askKey =
    shownStep && (shownStep.state !== 'pending' || shownStep.approval || ended) ? `${shownId}:${shownStep.state}:${shownStep.approval?.requestId ?? ''}:${ended}` : '';
  const [answers] = useLoad(
    () =>
      askKey !== ''
        ? searchWhole((...a) => api.searchHistory(...a), runId, { types: APPROVAL_EVENTS, reality: '', text: '', regex: false }, 1000)
        : Promise.resolve([]),
    [api, runId, askKey],
  );
  const [world] = useLoad(() => (forkOf ? api.worldDetail(runId) : Promise.resolve(undefined)), [api, runId, forkOf]);

  // The ledger is the truth: any event of this run re-reads its folded state.
  const refresh = useThrottled(reload, 250);
  useEffect(() => api.onLedgerEvents((batch) => batch.some((e) => e.stream === runId) && refresh()), [api, runId, refresh]);
  useEffect(() => api.onTokens((batch) => setTokens((s) => appendTokens(s, batch, runId))), [api, runId]);

  const d = detail.value;
  const state = d?.state ?? null;
  const model = useMemo(() => buildRunGraph(state), [state]);
  const counts = stepCounts(model);
  // "started … ago" turns when it reads differently; a moving run's duration every second.
  const live = d !== undefined && !isTerminal(state?.status ?? d.run.status);
  const now = useRelativeNow(d ? [d.run.createdAt] : [], live ? 1000 : undefined);

  // Select the step that needs attention when nothing is selected yet.
  const firstWaiting = model.nodes.find((n) => n.state === 'awaiting_approval' || n.state === 'running' || n.state === 'failed')?.id;
  const shown = selected ?? firstWaiting ?? model.nodes[0]?.id;
  const step = shown ? state?.steps[shown] : undefined;
  useEffect(() => setShownId(shown), [shown]);

  if (detail.status === 'loading') {
    return <Opening what="the run" />;
  }
  if (!d) {
    return (
      <OpenFailed
        title="This run could not be opened"
        message={detail.status === 'error' ? detail.message : ''}
        onRetry={reload}
        backHref={href({ screen: 'home' })}
        backLabel="Back to runs"
      />
    );
  }

  const run = d.run;
  const status = state?.status ?? run.status;
  const doAction = (fn: () => Promise<void>) => {
    setAction({ busy: true });
    fn().then(
      () => {
        setAction({ busy: false });
        reload();
      },
      (e: unknown) => setAction({ busy: false, error: toBridgeError(e).message }),
    );
  };
  const planner = tokens[''];
  const denied = deniedSteps(state);
  const modelReady = Boolean(models.value?.reachable && (models.value.models?.length ?? 0) > 0);
  // Another installation drives the run: Resume is for it to press.
  const canResume = status === 'paused' && (!waitsForModel || modelReady) && !d.drivenElsewhere;
  const checkpointId = run.latestCheckpointId;
  const childName = world.value?.fork ? world.value.world.name : undefined;
  // The planner's text matters while there is no plan yet, while it replans, or while it revises a plan.
  const thinking = planner && !isTerminal(status) && (model.nodes.length === 0 || Boolean(state?.invalidPlan) || Boolean(state?.revision));

  return (
    <div className="screen run-view">
      <header className="screen-head run-head">
        <div className="min0">
          <h1 className="ellipsis" title={childName ?? state?.request.task}>
            {childName ?? (state?.request.task || 'Explicit plan')}
          </h1>
          {run.baseRunId && (
            <p className="muted small fork-of" data-testid="fork-of">
              Fork of{' '}
              <a href={href({ screen: 'run', runId: run.baseRunId })} className="mono" title={run.baseRunId}>
                {shortId(run.baseRunId)}
              </a>
              {childName && state?.request.task ? <> · task: {state.request.task}</> : null}
            </p>
          )}
          <div className="meta-line">
            <RunStatusBadge status={status} />
            <span className="mono" title={run.id}>
              {shortId(run.id)}
            </span>
            <span title={formatAbsolute(run.createdAt)}>started {formatRelative(run.createdAt, now)}</span>
            <span title="How long the run has worked">{formatDuration(runDuration(run.createdAt, run.updatedAt, status, now))}</span>
            {waitingFor(run.updatedAt, status, now) !== undefined && (
              <span data-testid="waiting-for">waiting {formatDuration(waitingFor(run.updatedAt, status, now)!)}</span>
            )}
            {model.nodes.length > 0 && (
              <span>
                {counts.done ?? 0}/{model.nodes.length} steps done
              </span>
            )}
            {detail.status === 'error' && <span className="inline-error small">Not live: {detail.message}</span>}
          </div>
        </div>
        <div className="head-actions">
          <a className="button small" href={href({ screen: 'timeline', runId })}>
            Timeline
          </a>
          <a className="button small" href={href({ screen: 'lineage', select: run.worldId })}>
            Lineage
          </a>
          <ExportButton
            api={api}
            root={run.id}
            kind="run"
            name={state?.request.task || 'task run'}
            forked={Boolean(run.baseRunId)}
            unavailable={isTerminal(status) ? undefined : 'A task run can be exported once it has finished: a moving one would go on running wherever it was imported.'}
          />
          {canResume && (
            <button type="button" className="button small" disabled={action.busy} onClick={() => doAction(() => api.resumeRun(runId))}>
              Resume
            </button>
          )}
          {!isTerminal(status) && (
            <button type="button" className="button small danger" disabled={action.busy} onClick={() => doAction(() => api.cancelRun(runId))}>
              Cancel run
            </button>
          )}
        </div>
      </header>
      {action.error && (
        <p className="inline-error" role="alert">
          {action.error}
        </p>
      )}
      {state?.statusReason && !isTerminal(status) && <p className="status-note">{state.statusReason}</p>}
      {d.drivenElsewhere && !isTerminal(status) && (
        <p className="status-note" data-testid="driven-elsewhere">
          {d.drivenElsewhere}
        </p>
      )}
      {state?.invalidPlan && !isTerminal(status) && <p className="inline-warn">The last plan was invalid and the planner is trying again: {state.invalidPlan}</p>}
      {state?.response && (
        <section className="panel answer" aria-label="Answer" data-testid="run-answer">
          <span className="field-label">Answer</span>
          <p className="answer-text">{state.response}</p>
          {state.answer && (
            <p className="muted small">
              {state.answer.cites?.length ? (
                <>
                  Rests on{' '}
                  {state.answer.cites.map((id, i) => (
                    <span key={id}>
                      {i > 0 && ', '}
                      <button type="button" className="link-button mono" onClick={() => setSelected(id)} title={`Show step ${id}`}>
                        {id}
                      </button>
                    </span>
                  ))}
                </>
              ) : (
                'Answered without running a step'
              )}
              {state.answer.model && <> · by {state.answer.model}</>}
              {state.answer.review ? <> · after review {state.answer.review}</> : null}
            </p>
          )}
        </section>
      )}
      {status === 'terminated' && state?.statusReason && (
        <p className="status-note" data-testid="cancelled-why">
          {state.statusReason}
        </p>
      )}
      {status === 'failed' && (state?.error || run.error) && (
        <p className="inline-error" role="alert">
          The run failed: {state?.error || run.error}
        </p>
      )}

      {waitsForModel && (
        <section className="panel next-step" aria-label="What to do next" data-testid="next-step">
          <h2>This task needs a planning model</h2>
          {modelReady ? (
            <p>A model is reachable now: Resume, and the planner takes the task up where it waits.</p>
          ) : (
            <>
              <p>
                {models.status === 'loading'
                  ? 'Asking Ollama for its models…'
                  : models.value && !models.value.reachable
                    ? sentence(models.value.error || 'Ollama is not reachable')
                    : 'Ollama answers but has no models.'}{' '}
                Resume cannot help until a model is there.
              </p>
              <ul className="next-list">
                <li>
                  Start Ollama (<span className="mono">ollama serve</span>) and pull a model, then{' '}
                  <button type="button" className="link-button" onClick={reloadModels}>
                    check again
                  </button>
                  .
                </li>
                <li>
                  Or <a href={href({ screen: 'settings' })}>choose the Ollama host and a planning model in Settings</a>.
                </li>
                <li>
                  Or give the task an explicit plan: <a href={href({ screen: 'new' })}>New task</a> takes one as JSON, and
                  runs it without a model.
                </li>
              </ul>
            </>
          )}
        </section>
      )}
      {denied.length > 0 && status === 'failed' && (
        <section className="panel next-step" aria-label="What to do next" data-testid="next-step">
          <h2>
            You denied {denied.map((id) => state?.steps[id]?.node.title || id).join(', ')}
          </h2>
          <p>
            ducklm does not plan around a no. To go on, fork the run with an edited plan: change or drop the denied step;
            the steps already done keep their results.
          </p>
          {checkpointId ? (
            <button type="button" className="button primary small" onClick={() => setForking(true)}>
              Fork with an edited plan…
            </button>
          ) : (
            <p className="muted small">This run has no checkpoint to fork from.</p>
          )}
        </section>
      )}
      {deliberating && (
        <DeliberateDialog
          api={api}
          runId={deliberating.run}
          worldId={deliberating.world}
          parentName="The task's world"
          onClose={() => setDeliberating(undefined)}
          onApplied={() => {
            setDeliberating(undefined);
            navigate({ screen: 'world', runId: deliberating.run });
          }}
        />
      )}
      {forking && checkpointId && (
        <PlanForkDialog
          api={api}
          parentRunId={runId}
          checkpointId={checkpointId}
          plan={planText(state?.graph)}
          name={forkName(state?.request.task ?? '')}
          why={denied.length > 0 ? `You denied ${denied.join(', ')}: edit or drop it below.` : undefined}
          onClose={() => setForking(false)}
          onForked={(f) => {
            setForking(false);
            navigate({ screen: 'run', runId: f.run.id });
          }}
        />
      )}

      {d.approvals.length > 0 && (
        <section className="approvals" aria-label="Waiting for your approval">
          {d.approvals.map((a) => (
            <ApprovalCard
              key={a.requestId}
              api={api}
              approval={a}
              rules={rules.value ?? []}
              onAnswered={reload}
              drivenElsewhere={d.drivenElsewhere}
            />
          ))}
        </section>
      )}

      <PlanningPanel
        attempts={state?.planning ?? []}
        revised={state?.revised ?? []}
        reviews={state?.reviews ?? []}
        open={model.nodes.length === 0 || Boolean(state?.invalidPlan) || Boolean(state?.revision)}
      />

      {thinking && (
        <section className="panel thinking">
          <span className="field-label">
            <span className="spinner" aria-hidden="true" /> Planner thinking
          </span>
          <pre className="code-block tokens" aria-live="polite" data-testid="planner-tokens">
            {planner}
          </pre>
        </section>
      )}

      {model.nodes.length === 0 ? (
        !thinking && (
          <p className="empty">
            {isTerminal(status)
              ? 'This run ended before it had a plan.'
              : status === 'paused'
                ? 'No plan yet: the run is paused, and nothing plans it until it goes on.'
                : 'No plan yet: the planner is working on one.'}
          </p>
        )
      ) : (
        <div className="run-body">
          <section className="panel graph-panel" aria-label="Steps">
            <header className="panel-head">
              <h2>Task graph</h2>
              <span className="panel-meta">
                {Object.entries(counts)
                  .map(([s, n]) => `${n} ${s.replace(/_/g, ' ')}`)
                  .join(' · ')}
              </span>
            </header>
            <div className="graph-scroll">
              <RunGraph model={model} selected={shown} onSelect={setSelected} />
            </div>
          </section>
          {step && (
            <StepPanel
              step={step}
              screenshot={shot}
              image={image}
              tokens={shown ? tokens[shown] : undefined}
              approvals={shown && answers.value ? approvalHistory(answers.value, shown, runId) : []}
              runEnded={isTerminal(status)}
              onDeliberate={setDeliberating}
            />
          )}
        </div>
      )}
    </div>
  );
}
