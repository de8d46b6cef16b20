import { useEffect, useId, useRef, useState } from 'react';
import { type DucklmApi, type Forked, type PlanCheck, toBridgeError } from '../bridge';
import { shortId } from '../lib/ids';
import { forkName, planText } from '../lib/runStory';
import { useDebounced } from '../ui/useDebounced';
import { useLoad } from '../ui/useLoad';
import './runs.css';

interface PlanForkDialogProps {
  api: DucklmApi;
  parentRunId: string;
  checkpointId: string;
  /** The plan the new run starts with, as JSON text ({"nodes": [...]}): the run's current plan, or its plan at `at`. */
  plan: string;
  /** The child's name, pre-filled. */
  name: string;
  /** A sentence on why the fork is offered (the denied step), shown at the top. */
  why?: string | undefined;
  /** Where the new run starts, when not at the run's latest checkpoint: "the checkpoint at event #31". */
  at?: string | undefined;
  onClose: () => void;
  onForked: (f: Forked) => void;
}

/**
 * PlanForkDialog forks a task run with an edited plan: it speaks of plans
 * (a task run diverges by its plan, never by a seed), starts from the run's
 * current plan, and checks the edited plan as the user types.
 */
export function PlanForkDialog({ api, parentRunId, checkpointId, plan, name: initialName, why, at, onClose, onForked }: PlanForkDialogProps) {
  const [text, setText] = useState(plan);
  const [name, setName] = useState(initialName);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  // The last check, with the text it checked: Fork may be pressed before the
  // debounced check of what was just typed has answered.
  const [checked, setChecked] = useState<{ text: string; check: PlanCheck }>();
  const first = useRef<HTMLTextAreaElement>(null);
  const planId = useId();
  const hintId = useId();
  const settled = useDebounced(text, 250);

  useEffect(() => {
    first.current?.focus();
    const onKey = (e: KeyboardEvent) => e.key === 'Escape' && onClose();
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [onClose]);

  useEffect(() => {
    let live = true;
    checkPlan(api, settled).then((check) => live && setChecked({ text: settled, check }));
    return () => {
      live = false;
    };
  }, [api, settled]);

  const unchanged = text.trim() === plan.trim();
  const check = checked?.check;
  const problem = check && !check.valid ? check.problems[0] : undefined;
  const edit = (next: string) => {
    setText(next);
    // A failed fork's error was about the plan as it was.
    setError(undefined);
  };
  const submit = async () => {
    setBusy(true);
    setError(undefined);
    const sent = text;
    // Never fork with a plan the check has not passed: the backend would
    // answer with its own words for a broken delta, not the plan's problem.
    const c = checked?.text === sent ? checked.check : await checkPlan(api, sent);
    setChecked({ text: sent, check: c });
    if (!c.valid) {
      setBusy(false);
      return;
    }
    api
      .fork({ checkpointId, parentRunId, divergence: 'plan_edit', delta: unchanged ? '{}' : sent, seedPolicy: 'inherit', name: name.trim(), deliberationIndex: 0 })
      .then(onForked, (e: unknown) => {
        setBusy(false);
        setError(toBridgeError(e).message);
      });
  };

  return (
    <div className="modal-backdrop" onMouseDown={(e) => e.target === e.currentTarget && onClose()}>
      <div className="modal panel" role="dialog" aria-modal="true" aria-labelledby="plan-fork-title">
        <header className="panel-head">
          <h2 id="plan-fork-title">Fork this run with an edited plan</h2>
          <span className="panel-meta mono" title={checkpointId}>
            {shortId(parentRunId)} @ {shortId(checkpointId)}
          </span>
        </header>
        <div className="modal-body">
          {why && <p className="status-note">{why}</p>}
          <p className="muted small">
            The new run starts from {at ?? "this run's latest checkpoint"}. Steps done by then keep their results where you
            leave them unchanged; every other step runs under the plan below, and asks for approval again.
          </p>
          {/* The check's sentence describes the plan; it is not part of its name. */}
          <label className="field" htmlFor={planId}>
            <span className="field-label">Plan (JSON)</span>
          </label>
          <div className="field">
            <textarea
              id={planId}
              ref={first}
              className="input mono plan-edit"
              rows={14}
              spellCheck={false}
              value={text}
              onChange={(e) => edit(e.target.value)}
              aria-invalid={problem ? true : undefined}
              aria-describedby={hintId}
            />
            {problem ? (
              <span id={hintId} className="inline-error small" role="alert">
                {problem}
              </span>
            ) : (
              check && (
                <span id={hintId} className="muted small">
                  {unchanged ? (at ? 'The plan at that checkpoint, unchanged. ' : 'The current plan, unchanged. ') : ''}
                  {check.steps} {check.steps === 1 ? 'step' : 'steps'}, valid.
                </span>
              )
            )}
          </div>
          <label className="field">
            <span className="field-label">Name of the new run</span>
            <input className="input" value={name} onChange={(e) => setName(e.target.value)} />
          </label>
          {error && (
            <p className="inline-error" role="alert">
              {error}
            </p>
          )}
        </div>
        <footer className="modal-foot">
          <button type="button" className="button" onClick={onClose}>
            Cancel
          </button>
          <button type="button" className="button primary" disabled={busy || Boolean(problem)} onClick={() => void submit()}>
            {busy ? 'Forking…' : 'Fork with this plan'}
          </button>
        </footer>
      </div>
    </div>
  );
}

/** checkPlan is the backend's check of a plan; a failed call is the plan's one problem. */
function checkPlan(api: DucklmApi, text: string): Promise<PlanCheck> {
  return api.validatePlan(text).catch((e: unknown) => ({ valid: false, problems: [toBridgeError(e).message], steps: 0 }));
}

/**
 * TaskRunForkDialog is PlanForkDialog for a checkpoint chosen elsewhere (the
 * timeline): it reads the run's plan and task at that checkpoint first (a
 * review or a revision may have changed the plan since).
 */
export function TaskRunForkDialog(props: Omit<PlanForkDialogProps, 'plan' | 'name'>) {
  const [detail] = useLoad(
    () => props.api.runAtCheckpoint(props.checkpointId).then((state) => ({ state })),
    [props.api, props.checkpointId],
  );
  if (detail.status === 'error') {
    return (
      <div className="modal-backdrop" onMouseDown={(e) => e.target === e.currentTarget && props.onClose()}>
        <div className="modal panel" role="dialog" aria-modal="true" aria-label="Fork this run with an edited plan">
          <div className="modal-body">
            <p className="inline-error" role="alert">
              The run's plan at that checkpoint could not be read: {detail.message}
            </p>
          </div>
          <footer className="modal-foot">
            <button type="button" className="button" onClick={props.onClose}>
              Close
            </button>
          </footer>
        </div>
      </div>
    );
  }
  if (!detail.value) return null;
  const st = detail.value.state;
  return <PlanForkDialog {...props} plan={planText(st?.graph)} name={forkName(st?.request.task ?? '')} />;
}
