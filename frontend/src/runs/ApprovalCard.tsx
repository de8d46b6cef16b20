import { useEffect, useMemo, useRef, useState } from 'react';
import { type Approval, type DucklmApi, type RiskRule, toBridgeError } from '../bridge';
import { dropDraft, draftOf, keepDraft } from '../lib/approvalDrafts';
import { CONFINED, argsText, commandOf, inSandboxRow } from '../lib/approvals';
import { formatBytes, formatNanos } from '../lib/format';
import { RiskBadge } from '../ui/StatusBadge';
import { FileChange, fileWriteArgs } from './FileChange';
import './runs.css';

interface ApprovalCardProps {
  api: DucklmApi;
  approval: Approval;
  rules: readonly RiskRule[];
  /** Called once the backend accepted the answer. */
  onAnswered: () => void;
  /** Set when another installation drives the run: the answer waits for it. */
  drivenElsewhere?: string;
}

type Busy = 'approve' | 'deny' | undefined;

/**
 * ApprovalCard shows exactly what a step will do (the command or script, its
 * arguments, the sandbox and its limits, the risk rule that asked) and takes
 * the answer: approve, deny (with a reason), or edit the arguments and approve.
 */
export function ApprovalCard({ api, approval: a, rules, onAnswered, drivenElsewhere }: ApprovalCardProps) {
  // An answer begun and not sent survives the card being drawn again.
  const [draft] = useState(() => draftOf(a.requestId));
  const [editing, setEditing] = useState(draft?.editing ?? false);
  const [edited, setEdited] = useState(() => draft?.edited ?? argsText(a.args));
  const [reason, setReason] = useState(draft?.reason ?? '');
  const [network, setNetwork] = useState(draft?.network ?? a.network);
  const [allowHost, setAllowHost] = useState(draft?.allowHost ?? false);
  const web = a.web;
  const [busy, setBusy] = useState<Busy>();
  const [error, setError] = useState<string>();
  // Answered: the card says so until the run view drops it, with no
  // buttons and no file state read after the answer (the step may have
  // written the file already: a diff against that would show less than
  // what was approved).
  const [answered, setAnswered] = useState<'approved' | 'denied'>();
  // One key per card: a retried click is the same answer, never a second one.
  const key = useRef(`${a.requestId}:${Math.random().toString(36).slice(2)}`);
  const begun = editing || reason !== '' || network !== a.network || allowHost;
  useEffect(() => {
    if (answered) return;
    if (begun) keepDraft(a.requestId, { editing, edited, reason, network, allowHost });
    else dropDraft(a.requestId);
  }, [a.requestId, answered, begun, editing, edited, reason, network, allowHost]);

  const rule = rules.find((r) => r.id === a.rule);
  const write = a.tool === 'file_write' ? fileWriteArgs(a.args) : undefined;
  const cmd = write ? undefined : commandOf(a.args);
  const isScript = a.tool === 'coder' || (typeof a.args === 'object' && a.args !== null && 'script' in a.args);
  const editError = useMemo(() => {
    if (!editing) return undefined;
    try {
      JSON.parse(edited);
      return undefined;
    } catch (e) {
      return `The arguments are not valid JSON: ${e instanceof Error ? e.message : String(e)}`;
    }
  }, [editing, edited]);

  const answer = (approve: boolean) => {
    setBusy(approve ? 'approve' : 'deny');
    setError(undefined);
    api
      .answer({
        runId: a.runId,
        requestId: a.requestId,
        approve,
        args: approve && editing ? edited : '',
        // Approving a web step is approving its host: the grant is the network.
        network: approve && (web !== undefined || network),
        ...(web && approve && allowHost ? { allowHost: true } : {}),
        reason: approve ? '' : reason.trim(),
        idempotencyKey: key.current,
      })
      .then(
        () => {
          dropDraft(a.requestId);
          setBusy(undefined);
          setAnswered(approve ? 'approved' : 'denied');
          onAnswered();
        },
        (e: unknown) => {
          setBusy(undefined);
          setError(toBridgeError(e).message);
        },
      );
  };

  const l = a.limits;
  const where = a.confinement ?? 'sandbox';
  const head = (
    <header className="approval-head">
      <RiskBadge risk={a.risk} />
      <h3>{a.title || a.step}</h3>
      <span className="muted mono small">
        {a.step} · {a.tool}
      </span>
    </header>
  );
  if (answered) {
    return (
      <article className={`panel approval risk-border-${a.risk}`} aria-label={`Approval for ${a.title || a.step}`} data-testid="approval-answered">
        {head}
        <p className="muted" role="status">
          {drivenElsewhere
            ? `Answered. ${drivenElsewhere}`
            : answered === 'approved'
              ? 'Approved: the step runs.'
              : 'Denied: the run goes on without this step.'}
        </p>
      </article>
    );
  }
  return (
    <article className={`panel approval risk-border-${a.risk}`} aria-label={`Approval for ${a.title || a.step}`} data-testid="approval-card">
      {head}
      <p className="approval-why">
        <strong>Why it asks:</strong> {a.why}
        {' — rule '}
        <code>{a.rule}</code>
        {rule && <span className="muted"> ({rule.description})</span>}
      </p>
      {a.untrusted && a.untrusted.length > 0 && (
        <p className="inline-warn" data-testid="approval-untrusted">
          This step was planned after the run read {a.untrusted.join(', ')}. Text from outside may try to steer the model:
          check that the step serves your task, not the page.
        </p>
      )}
      {a.inDoubt && (
        <p className="inline-warn">
          This step was running when ducklm stopped; it may have run already. Approving runs it again.
        </p>
      )}

      {!editing && cmd && (
        <div className="approval-cmd">
          <span className="field-label">{cmd.label}</span>
          <pre className="code-block" data-testid="approval-command">
            {cmd.text}
          </pre>
        </div>
      )}
      {!editing && write && <FileChange args={write} current={a.current} />}
      {!editing && web && (
        <dl className="limits web-plan" data-testid="approval-web">
          <div>
            <dt>URL</dt>
            <dd className="mono break">{web.url}</dd>
          </div>
          <div>
            <dt>Host</dt>
            <dd className={web.local ? 'warn' : undefined}>
              {web.host}
              {web.local && <span className="small block">a {web.local} address: this machine or your network</span>}
            </dd>
          </div>
          <div>
            <dt>Method</dt>
            <dd>
              {web.method}
              {web.bodyBytes ? ` with a ${formatBytes(web.bodyBytes)} body` : ''}
            </dd>
          </div>
          <div>
            <dt>Limits</dt>
            <dd>
              {web.browser
                ? `rendered in the sandboxed Chromium (its scripts run; requests to other hosts are refused unless allowed), ${formatNanos(web.timeoutMs * 1e6)}`
                : `${formatBytes(web.maxBytes)} of body, ${web.maxRedirects} ${web.maxRedirects === 1 ? 'redirect' : 'redirects'}, ${formatNanos(web.timeoutMs * 1e6)}`}
            </dd>
          </div>
        </dl>
      )}
      {!editing && a.mcp && (
        <dl className="limits web-plan" data-testid="approval-mcp">
          <div>
            <dt>MCP server</dt>
            <dd className="mono">{a.mcp.server}</dd>
          </div>
          <div>
            <dt>Tool</dt>
            <dd className="mono">{a.mcp.tool}</dd>
          </div>
          <div>
            <dt>The server says</dt>
            <dd>
              {a.mcp.readOnlyHint ? 'it only reads (readOnlyHint)' : 'nothing about what it changes'}
              <span className="muted small block">What a server says of its tool is shown, never trusted on its own.</span>
            </dd>
          </div>
        </dl>
      )}
      {!editing && (!cmd || !isScript) && (
        <details className="approval-args" open={!cmd && !write}>
          <summary className="summary-toggle">{cmd || write ? 'All arguments (JSON)' : 'Arguments (JSON)'}</summary>
          <pre className="code-block">{argsText(a.args)}</pre>
        </details>
      )}
      {editing && (
        <label className="field">
          <span className="field-label">Arguments (edit, then approve)</span>
          <textarea className="input mono" rows={Math.min(14, edited.split('\n').length + 1)} value={edited} onChange={(e) => setEdited(e.target.value)} aria-label="Edited arguments" />
          {editError && <span className="inline-error small">{editError}</span>}
        </label>
      )}

      <dl className="limits">
        {where !== 'sandbox' && (
          <div>
            <dt>Runs</dt>
            <dd className="ok" data-testid="confinement">
              {CONFINED[where]}
            </dd>
          </div>
        )}
        {inSandboxRow(where) && (
          <div>
            <dt>Sandbox</dt>
            <dd className={a.sandboxed ? 'ok' : 'warn'} data-testid="approval-sandbox">
              {a.sandboxed ? 'bubblewrap' : 'none: runs on this machine as you'}
            </dd>
          </div>
        )}
        <div>
          <dt>Network</dt>
          <dd>{a.network ? 'requested' : 'off'}</dd>
        </div>
        <div>
          <dt>Timeout</dt>
          <dd>
            {formatNanos(l.timeout)}
            <span className="muted small block" data-testid="timeout-note">
              {a.retryOnTimeout ? 'then stopped and run once more: its plan says a retry is safe' : 'then stopped and failed, not retried'}
            </span>
          </dd>
        </div>
        {/* Process limits hold a sandboxed process (memory and CPU a web worker too); ducklm's own work and a world worker have limits of their own. */}
        {inSandboxRow(where) && (
          <>
            <div>
              <dt>Memory</dt>
              <dd>{formatBytes(l.memoryBytes)}</dd>
            </div>
            <div>
              <dt>CPU</dt>
              <dd>{l.cpuSeconds} s</dd>
            </div>
          </>
        )}
        {(where === 'sandbox' || where === 'workspace') && (
          <>
            <div>
              <dt>Largest file</dt>
              <dd>{formatBytes(l.fileBytes)}</dd>
            </div>
            <div>
              <dt>Output</dt>
              <dd>{formatBytes(l.outputBytes)}</dd>
            </div>
          </>
        )}
        {where === 'sandbox' && (
          <div>
            <dt>Processes</dt>
            <dd>{l.processes}</dd>
          </div>
        )}
      </dl>

      {web && (
        <label className="check-row">
          <input type="checkbox" checked={allowHost} onChange={(e) => setAllowHost(e.target.checked)} /> Also allow {web.host} for the rest of this run
        </label>
      )}
      {a.network && !web && (
        <label className="check-row">
          <input type="checkbox" checked={network} onChange={(e) => setNetwork(e.target.checked)} /> Allow network access for this step
        </label>
      )}

      {error && (
        <p className="inline-error" role="alert">
          {error}
        </p>
      )}
      <div className="approval-actions">
        {/* The widest label holds the width, so the buttons beside it stay under the pointer when the label changes. */}
        <button type="button" className="button primary stable-label" disabled={busy !== undefined || editError !== undefined} onClick={() => answer(true)}>
          <span className="label-sizer" aria-hidden="true">
            Approve edited
          </span>
          <span>{busy === 'approve' ? 'Approving…' : editing ? 'Approve edited' : 'Approve'}</span>
        </button>
        {!isScript && (
          <button type="button" className="button" disabled={busy !== undefined} onClick={() => setEditing((v) => !v)}>
            {editing ? 'Cancel edit' : 'Edit and approve…'}
          </button>
        )}
        <span className="spacer" />
        <input className="input small-input" placeholder="Reason (optional)" value={reason} onChange={(e) => setReason(e.target.value)} aria-label="Reason for denying" />
        <button type="button" className="button danger" disabled={busy !== undefined} onClick={() => answer(false)}>
          {busy === 'deny' ? 'Denying…' : 'Deny'}
        </button>
      </div>
    </article>
  );
}
