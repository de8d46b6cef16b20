import { useEffect, useMemo, useState } from 'react';
import { type DucklmApi, toBridgeError } from '../bridge';
import { ExportButton } from '../bundles/BundleButtons';
import { formatDuration, isTerminal, runDuration } from '../lib/format';
import { shortId } from '../lib/ids';
import { href } from '../lib/route';
import { buildRunGraph, stepCounts } from '../lib/runGraph';
import { formatAbsolute, formatRelative } from '../lib/time';
import { type TokenStreams, appendTokens } from '../lib/tokens';
import { OpenFailed, Opening } from '../ui/LoadState';
import { RunStatusBadge } from '../ui/StatusBadge';
import { useLoad, useThrottled } from '../ui/useLoad';
import { useRelativeNow } from '../ui/useNow';
import { ApprovalCard } from './ApprovalCard';
import { PlanningPanel } from './PlanningPanel';
import { RunGraph } from './RunGraph';
import { StepPanel } from './StepPanel';

/** RunView shows one task run live: its graph, the open approvals, the selected step, and streamed model text. */
export function RunView({ api, runId }: { api: DucklmApi; runId: string }) {
  const [detail, reload] = useLoad(() => api.runDetail(runId), [api, runId]);
  const [rules] = useLoad(() => api.riskRules(), [api]);
  const [tokens, setTokens] = useState<TokenStreams>({});
  const [selected, setSelected] = useState<string>();
  const [action, setAction] = useState<{ busy: boolean; error?: string }>({ busy: false });

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
  // The planner's text matters while there is no plan yet, while it replans, or while it revises a plan.
  const thinking = planner && !isTerminal(status) && (model.nodes.length === 0 || Boolean(state?.invalidPlan) || Boolean(state?.revision));

  return (
    <div className="screen run-view">
      <header className="screen-head run-head">
        <div className="min0">
          <h1 className="ellipsis" title={state?.request.task}>
            {state?.request.task || 'Explicit plan'}
          </h1>
          <div className="meta-line">
            <RunStatusBadge status={status} />
            <span className="mono" title={run.id}>
              {shortId(run.id)}
            </span>
            <span title={formatAbsolute(run.createdAt)}>started {formatRelative(run.createdAt, now)}</span>
            <span>{formatDuration(runDuration(run.createdAt, run.updatedAt, status, now))}</span>
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
          {status === 'paused' && (
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
      {state?.invalidPlan && !isTerminal(status) && <p className="inline-warn">The last plan was invalid and the planner is trying again: {state.invalidPlan}</p>}
      {status === 'completed' && state?.response && (
        <section className="panel response">
          <span className="field-label">Response</span>
          <p>{state.response}</p>
        </section>
      )}
      {status === 'failed' && (state?.error || run.error) && (
        <p className="inline-error" role="alert">
          The run failed: {state?.error || run.error}
        </p>
      )}

      {d.approvals.length > 0 && (
        <section className="approvals" aria-label="Waiting for your approval">
          {d.approvals.map((a) => (
            <ApprovalCard key={a.requestId} api={api} approval={a} rules={rules.value ?? []} onAnswered={reload} />
          ))}
        </section>
      )}

      <PlanningPanel
        attempts={state?.planning ?? []}
        revised={state?.revised ?? []}
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
            {isTerminal(status) ? 'This run ended before it had a plan.' : 'No plan yet: the planner is working on one.'}
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
          {step && <StepPanel step={step} tokens={shown ? tokens[shown] : undefined} />}
        </div>
      )}
    </div>
  );
}
