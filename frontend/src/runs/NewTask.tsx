import { type FormEvent, useEffect, useMemo, useState } from 'react';
import { type ApprovalMode, type DucklmApi, type PlanCheck, missingWorkspace, toBridgeError } from '../bridge';
import { modelGap, plannedWithoutModel } from '../lib/modelGap';
import { EXAMPLE_PLAN, checkPlanSyntax } from '../lib/plan';
import { href } from '../lib/route';
import { CodeEditor } from '../ui/CodeEditor';
import { useLoad } from '../ui/useLoad';
import { navigate } from '../ui/useRoute';
import './runs.css';

const MODES: readonly { id: ApprovalMode; label: string; hint: string }[] = [
  { id: 'ask_risky', label: 'Ask for risky steps', hint: 'Medium and high risk steps wait for you.' },
  { id: 'ask_every', label: 'Ask for every step', hint: 'Nothing runs until you approve it.' },
  { id: 'auto_sandboxed', label: 'Run sandboxed steps', hint: 'Only high risk or unsandboxed steps wait.' },
];

const ROLES = ['planner', 'coder', 'critic'] as const;

type PlanState = { status: 'idle' } | { status: 'checking' } | { status: 'checked'; check: PlanCheck } | { status: 'error'; message: string };

/** NewTask is the form that starts a task run: free text or an explicit plan, and its limits. */
export function NewTask({ api }: { api: DucklmApi }) {
  const [kind, setKind] = useState<'text' | 'plan'>('text');
  const [task, setTask] = useState('');
  const [taskTouched, setTaskTouched] = useState(false);
  const [plan, setPlan] = useState(EXAMPLE_PLAN);
  const [chosenMode, setMode] = useState<ApprovalMode>();
  const [models, setModels] = useState<Record<string, string>>({});
  const [workspace, setWorkspace] = useState('');
  const [maxSteps, setMaxSteps] = useState('20');
  const [review, setReview] = useState(false);
  const [timeout, setTimeoutSeconds] = useState('120');
  const [submitting, setSubmitting] = useState(false);
  const [submitError, setSubmitError] = useState<string>();
  // The workspace folder the backend said does not exist: the form asks before creating it.
  const [askCreate, setAskCreate] = useState<string>();
  const [folderError, setFolderError] = useState<string>();
  const [planState, setPlanState] = useState<PlanState>({ status: 'idle' });

  const [info, checkModels] = useLoad(() => api.models(), [api]);
  // The settings' defaults show in the form; the backend applies the same ones.
  const [prefs] = useLoad(() => api.getSettings(), [api]);
  const defaults = prefs.value?.settings;
  const defaultMode: ApprovalMode = defaults?.approvalMode || 'ask_risky';
  const mode = chosenMode ?? defaultMode;
  const [tools] = useLoad(() => api.toolCatalog(), [api]);

  const syntax = useMemo(() => (kind === 'plan' ? checkPlanSyntax(plan) : undefined), [kind, plan]);

  // The backend validates a plan that parses (tools, dependencies, cycles), shortly after typing stops.
  useEffect(() => {
    if (kind !== 'plan' || !syntax?.ok) {
      setPlanState({ status: 'idle' });
      return;
    }
    let cancelled = false;
    setPlanState({ status: 'checking' });
    const id = setTimeout(() => {
      api.validatePlan(plan).then(
        (check) => !cancelled && setPlanState({ status: 'checked', check }),
        (e: unknown) => !cancelled && setPlanState({ status: 'error', message: toBridgeError(e).message }),
      );
    }, 300);
    return () => {
      cancelled = true;
      clearTimeout(id);
    };
  }, [api, kind, plan, syntax?.ok]);

  const steps = Number(maxSteps);
  const secs = Number(timeout);
  const problems: string[] = [];
  const taskMissing = kind === 'text' && task.trim() === '';
  if (taskMissing && taskTouched) problems.push('Describe the task, or switch to an explicit plan.');
  if (kind === 'plan' && syntax && !syntax.ok) problems.push(syntax.message);
  if (kind === 'plan' && planState.status === 'checked' && !planState.check.valid) problems.push(...planState.check.problems);
  if (!Number.isInteger(steps) || steps < 1 || steps > 1000) problems.push('Max steps is a whole number from 1 to 1000.');
  if (!Number.isInteger(secs) || secs < 1 || secs > 86_400) problems.push('The step timeout is a whole number of seconds from 1 to 86400.');
  const planReady = kind === 'text' || (planState.status === 'checked' && planState.check.valid);
  const canSubmit = problems.length === 0 && !taskMissing && planReady && !submitting;

  const chooseFolder = () => {
    setFolderError(undefined);
    api.chooseFolder('Workspace folder for this task').then(
      (dir) => dir !== '' && setWorkspace(dir),
      (e: unknown) => setFolderError(toBridgeError(e).message),
    );
  };

  const submit = (e: FormEvent) => {
    e.preventDefault();
    start(false);
  };

  const start = (createWorkspace: boolean) => {
    if (!canSubmit) return;
    setSubmitting(true);
    setSubmitError(undefined);
    setAskCreate(undefined);
    const chosen = Object.fromEntries(Object.entries(models).filter(([, m]) => m !== ''));
    api
      .submitTask({
        task: task.trim(),
        plan: kind === 'plan' ? plan : '',
        approvalMode: mode,
        models: chosen,
        workspace: workspace.trim(),
        ...(createWorkspace ? { createWorkspace: true } : {}),
        timeoutSeconds: secs,
        maxSteps: steps,
        ...(review && kind === 'plan' ? { review: true } : {}),
      })
      .then(
        (run) => navigate({ screen: 'run', runId: run.id }),
        (err: unknown) => {
          setSubmitting(false);
          const missing = missingWorkspace(err);
          if (missing !== undefined && !createWorkspace) setAskCreate(missing);
          else setSubmitError(toBridgeError(err).message);
        },
      );
  };

  const available = info.value?.reachable ? info.value.models : [];
  // A described task with no model to plan it would only wait: say so before it is submitted.
  const gap = modelGap(info.value);
  const checking = info.status === 'loading' || (info.status === 'ready' && info.reloading);
  const waitsForModel = kind === 'text' && gap !== undefined && !plannedWithoutModel(task);

  return (
    <form className="screen new-task" onSubmit={submit} aria-labelledby="new-title" noValidate>
      <header className="screen-head">
        <h1 id="new-title">New task</h1>
        <div className="segmented" role="radiogroup" aria-label="What to run">
          <label className={kind === 'text' ? 'on' : undefined}>
            <input type="radio" name="kind" checked={kind === 'text'} onChange={() => setKind('text')} /> Describe the task
          </label>
          <label className={kind === 'plan' ? 'on' : undefined}>
            <input type="radio" name="kind" checked={kind === 'plan'} onChange={() => setKind('plan')} /> Explicit plan (JSON)
          </label>
        </div>
      </header>

      <div className="new-grid">
        <div className="new-main">
          <label className="field">
            <span className="field-label">{kind === 'text' ? 'Task' : 'Task (optional label)'}</span>
            <textarea
              className="input"
              rows={kind === 'text' ? 5 : 2}
              value={task}
              onChange={(e) => {
                setTask(e.target.value);
                setTaskTouched(true);
              }}
              onBlur={() => setTaskTouched(true)}
              aria-label={kind === 'text' ? 'Task' : 'Task label'}
              placeholder={kind === 'text' ? 'Summarise what hostnamectl says about this machine' : 'What this plan does'}
            />
          </label>

          {kind === 'plan' && (
            <div className="field">
              <span className="field-label" id="plan-label">
                Plan
              </span>
              <CodeEditor
                value={plan}
                onChange={setPlan}
                language="json"
                label="Plan JSON"
                minHeight={220}
                errorLine={syntax && !syntax.ok ? syntax.line : undefined}
              />
              <PlanStatus syntaxOk={syntax?.ok ?? false} state={planState} />
            </div>
          )}

          {problems.length > 0 && (
            <ul className="problems" aria-label="What to fix" data-testid="form-problems">
              {problems.map((p) => (
                <li key={p}>{p}</li>
              ))}
            </ul>
          )}
          {submitError && (
            <p className="inline-error" role="alert">
              {submitError}
            </p>
          )}
          {askCreate !== undefined && (
            <div className="inline-error" role="alert" data-testid="ask-create-workspace">
              <p>
                The workspace folder <code>{askCreate}</code> does not exist. Create it and start the run?
              </p>
              <div className="actions">
                <button type="button" className="button primary" onClick={() => start(true)} disabled={!canSubmit}>
                  Create the folder and start
                </button>
                <button type="button" className="button" onClick={() => setAskCreate(undefined)}>
                  Not now
                </button>
              </div>
            </div>
          )}
          {waitsForModel && (
            <div className="inline-warn model-gap" role="status" aria-label="No model to plan the task" data-testid="no-model">
              <p>
                {gap}, so no model can plan this task: started now, the run waits (paused) until one answers.
              </p>
              <ul>
                <li>
                  Start Ollama (<code>ollama serve</code>) and{' '}
                  <button type="button" className="button small" onClick={checkModels} disabled={checking}>
                    {checking ? 'Checking…' : 'Check again'}
                  </button>
                </li>
                <li>
                  Choose a model or another Ollama host in <a href={href({ screen: 'settings' })}>Settings</a>
                </li>
                <li>
                  <button type="button" className="button small" onClick={() => setKind('plan')}>
                    Give an explicit plan
                  </button>{' '}
                  <span className="muted small">(it runs without a model), or start a one-liner with “$ ”</span>
                </li>
                <li>Or start it anyway below: it waits for a model.</li>
              </ul>
            </div>
          )}
          <div className="actions">
            <button type="submit" className="button primary" disabled={!canSubmit}>
              {submitting ? 'Starting…' : waitsForModel ? 'Start anyway (it waits for a model)' : 'Start run'}
            </button>
          </div>
        </div>

        <aside className="new-side">
          <fieldset className="field">
            <legend className="field-label">Approval</legend>
            {MODES.map((m) => (
              <label key={m.id} className="radio-row">
                <input type="radio" name="approval" checked={mode === m.id} onChange={() => setMode(m.id)} />
                <span>
                  {m.label}
                  {m.id === defaultMode && defaults?.approvalMode && <span className="muted"> (default in Settings)</span>}
                  <span className="muted small block">{m.hint}</span>
                </span>
              </label>
            ))}
          </fieldset>

          <fieldset className="field">
            <legend className="field-label">Models</legend>
            {info.status === 'loading' && <span className="muted small">Asking Ollama…</span>}
            {info.value && !info.value.reachable && (
              <p className="muted small">
                Ollama does not answer at {info.value.host}: a described task waits for a model (an explicit plan or a “$ ” one-liner runs without
                one). Start it with ollama serve to choose models.
              </p>
            )}
            {info.value?.reachable && available.length === 0 && <p className="muted small">Ollama has no models; pull one with ollama pull.</p>}
            {defaults && (
              <p className="muted small">
                Defaults come from <a href={href({ screen: 'settings' })}>Settings</a>.
              </p>
            )}
            {ROLES.map((role) => (
              <label key={role} className="inline-field">
                <span>{role}</span>
                <select
                  className="input"
                  value={models[role] ?? ''}
                  onChange={(e) => setModels((m) => ({ ...m, [role]: e.target.value }))}
                  disabled={available.length === 0}
                  aria-label={`Model for the ${role}`}
                >
                  <option value="">
                    {defaults?.models[role] ? `${defaults.models[role]} (default)` : 'automatic (default)'}
                  </option>
                  {available.map((m) => (
                    <option key={m} value={m}>
                      {m}
                    </option>
                  ))}
                </select>
              </label>
            ))}
          </fieldset>

          <div className="field">
            <span className="field-label">Workspace folder</span>
            <div className="row">
              <input
                className="input mono"
                value={workspace}
                onChange={(e) => {
                  setWorkspace(e.target.value);
                  setAskCreate(undefined);
                }}
                placeholder="a new folder in the data directory"
                aria-label="Workspace folder"
              />
              <button type="button" className="button" onClick={chooseFolder}>
                Choose…
              </button>
            </div>
            {folderError && <p className="inline-error small">{folderError}</p>}
          </div>

          <fieldset className="field">
            <legend className="field-label">Limits</legend>
            <label className="inline-field">
              <span>Max steps</span>
              <input className="input num" type="number" min={1} max={1000} value={maxSteps} onChange={(e) => setMaxSteps(e.target.value)} />
            </label>
            <label className="inline-field">
              <span>Step timeout (s)</span>
              <input className="input num" type="number" min={1} value={timeout} onChange={(e) => setTimeoutSeconds(e.target.value)} />
            </label>
          </fieldset>

          {kind === 'plan' && (
            <label className="inline-field" data-testid="review-toggle">
              <input type="checkbox" checked={review} onChange={(e) => setReview(e.target.checked)} />
              <span>
                Review the results and answer the task (a planning model reads what the steps did; a task planned by a model always
                ends this way)
              </span>
            </label>
          )}

          {kind === 'plan' && tools.value && tools.value.length > 0 && (
            <details className="field tools-help">
              <summary className="field-label">Tools a plan may use</summary>
              <ul>
                {tools.value.map((t) => (
                  <li key={t.name}>
                    <code>{t.name}</code>{' '}
                    {t.portable && (
                      <span className="chip small" title="On a team's database its work runs on the team's workers when one is alive">
                        may run on the team's workers
                      </span>
                    )}{' '}
                    <span className="muted small">{t.description}</span>
                  </li>
                ))}
              </ul>
            </details>
          )}
        </aside>
      </div>
    </form>
  );
}

function PlanStatus({ syntaxOk, state }: { syntaxOk: boolean; state: PlanState }) {
  if (!syntaxOk) return null;
  switch (state.status) {
    case 'checking':
      return (
        <p className="plan-status muted small" aria-live="polite">
          <span className="spinner" aria-hidden="true" /> Checking the plan…
        </p>
      );
    case 'checked':
      return state.check.valid ? (
        <p className="plan-status ok small" aria-live="polite" data-testid="plan-valid">
          Valid plan: {state.check.steps} {state.check.steps === 1 ? 'step' : 'steps'}.
        </p>
      ) : null;
    case 'error':
      return <p className="inline-error small">The plan could not be checked: {state.message}</p>;
    default:
      return null;
  }
}
