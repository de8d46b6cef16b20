import { useMemo } from 'react';
import type { StepRecord } from '../bridge';
import type { ApprovalEntry } from '../lib/approvalHistory';
import { CONFINED, argsText, commandOf, placementText } from '../lib/approvals';
import { formatDuration } from '../lib/format';
import { href } from '../lib/route';
import { shortId } from '../lib/ids';
import { type SearchSummary, actionText, searchOf } from '../lib/search';
import { formatAbsolute, formatSeconds } from '../lib/time';
import { type WebResult, otherNotes, webResultOf } from '../lib/webResult';
import { StepStateBadge } from '../ui/StatusBadge';
import { FileChange, fileWriteArgs } from './FileChange';
import { McpImages, mcpImagesOf } from './McpImages';
import { PageScreenshot, screenshotOf } from './PageScreenshot';
import './runs.css';

/**
 * StepPanel shows one step: what it runs (a file_write's content), who
 * approved it and how, its output tails, the files it changed and the
 * critic's score.
 */
export function StepPanel({
  step,
  tokens,
  approvals = [],
  runEnded = false,
  onDeliberate,
  screenshot,
  image,
}: {
  step: StepRecord;
  tokens?: string | undefined;
  approvals?: ApprovalEntry[];
  /** runEnded: the run is over, so a request still unanswered never will be. */
  runEnded?: boolean;
  /** onDeliberate, when given, offers "Deliberate…" on a world_search step's world. */
  onDeliberate?: ((s: SearchSummary) => void) | undefined;
  /** Loads the screenshot a browser step took, as a data: URL. */
  screenshot?: (stepId: string) => Promise<string>;
  /** Loads an image an MCP step's server answered with, as a data: URL. */
  image?: (stepId: string, index: number) => Promise<string>;
}) {
  const n = step.node;
  const search = searchOf(step);
  const r = step.result;
  const shot = screenshotOf(n.tool, r?.output);
  // A web step is shown by what its tool returned: status, final URL, type, title and text.
  const web = r ? webResultOf(n.tool, r.output) : undefined;
  const loadShot = useMemo(() => (screenshot ? () => screenshot(n.id) : undefined), [screenshot, n.id]);
  const images = mcpImagesOf(n.tool, r?.output);
  const loadImage = useMemo(() => (image ? (i: number) => image(n.id, i) : undefined), [image, n.id]);
  const write = n.tool === 'file_write' ? fileWriteArgs(step.approvedArgs ?? n.args) : undefined;
  const cmd = write ? undefined : commandOf(step.approvedArgs ?? n.args);
  return (
    <section className="panel step-panel" aria-label={`Step ${n.id}`} data-testid="step-panel">
      <header className="panel-head">
        <h2>{n.title || n.id}</h2>
        <StepStateBadge state={step.denied ? 'denied' : step.state} />
        <span className="panel-meta mono">
          {n.id} · {n.kind === 'coder' ? 'coder' : n.tool}
          {step.attempts > 0 ? ` · attempt ${step.attempts}` : ''}
        </span>
      </header>
      <div className="step-body">
        {step.error &&
          (step.denied ? (
            <p className="status-note" data-testid="step-denied">
              You {step.error.replace(/^denied by the user/, 'denied this step')}. It did not run.
            </p>
          ) : (
            <p className="inline-error">{step.error}</p>
          ))}
        {write ? (
          <FileChange args={write} />
        ) : cmd ? (
          <div>
            <span className="field-label">{cmd.label}</span>
            <pre className="code-block">{cmd.text}</pre>
          </div>
        ) : (
          n.args !== undefined && (
            <div>
              <span className="field-label">Arguments</span>
              <pre className="code-block">{argsText(step.approvedArgs ?? n.args)}</pre>
            </div>
          )
        )}
        {approvals.length > 0 && <ApprovalHistory entries={approvals} runEnded={runEnded} />}
        {step.script && (
          <div>
            <span className="field-label">Script ({step.script.language})</span>
            {step.script.model && <span className="muted small"> by {step.script.model}</span>}
            <pre className="code-block">{step.script.source}</pre>
          </div>
        )}
        {tokens && (
          <div>
            <span className="field-label">Coder writing…</span>
            <pre className="code-block tokens" aria-live="polite">
              {tokens}
            </pre>
          </div>
        )}
        {r && (
          <>
            <dl className="facts-inline">
              {web?.status ? (
                <div>
                  <dt>Status</dt>
                  <dd className={r.ok ? 'ok' : 'fail'} data-testid="web-status">
                    {web.status}
                  </dd>
                </div>
              ) : (
                <div>
                  <dt>Exit</dt>
                  <dd className={r.ok ? 'ok' : 'fail'}>{r.error ? 'did not run' : r.timedOut ? 'timed out' : r.exitCode}</dd>
                </div>
              )}
              {/* A step that did not run at all took no time and ran nowhere. */}
              {!r.error && (
                <div>
                  <dt>Took</dt>
                  <dd>{formatDuration(r.durationMs)}</dd>
                </div>
              )}
              {r.error ? null : !r.confinement || r.confinement === 'sandbox' ? (
                <div>
                  <dt>Sandbox</dt>
                  <dd className={r.sandboxed ? undefined : 'warn'} data-testid="step-confinement">
                    {r.sandboxed ? 'bubblewrap' : 'none: it ran on this machine as you'}
                  </dd>
                </div>
              ) : (
                <>
                  <div>
                    <dt>Ran</dt>
                    <dd data-testid="step-confinement">{CONFINED[r.confinement]}</dd>
                  </div>
                  {r.confinement === 'web_worker' && (
                    <div>
                      <dt>Sandbox</dt>
                      <dd className={r.sandboxed ? undefined : 'warn'} data-testid="step-sandbox">
                        {r.sandboxed ? 'bubblewrap' : 'none: it ran on this machine as you'}
                      </dd>
                    </div>
                  )}
                </>
              )}
              {r.placement && (
                <div>
                  <dt>Where</dt>
                  <dd data-testid="step-placement">{placementText(r.placement)}</dd>
                </div>
              )}
              {r.truncated && (
                <div>
                  <dt>Output</dt>
                  <dd className="warn">cut at the limit</dd>
                </div>
              )}
            </dl>
            {search && <SearchResult search={search} stepId={n.id} onDeliberate={onDeliberate} />}
            {web && <WebPage web={web} />}
            {web && r.ok && <WebNotes web={web} notes={otherNotes(r.stderrTail)} />}
            {r.stdoutTail && !(web && web.text) && (
              <div>
                <span className="field-label">stdout (tail)</span>
                <pre className="code-block out" data-testid="stdout">
                  {r.stdoutTail}
                </pre>
              </div>
            )}
            {r.stderrTail && !(web && r.ok) && (
              <div>
                <span className="field-label">stderr (tail)</span>
                <pre className="code-block err" data-testid="stderr">
                  {r.stderrTail}
                </pre>
              </div>
            )}
            {shot && loadShot && <PageScreenshot load={loadShot} finalUrl={shot.finalUrl} />}
            {images.length > 0 && loadImage && <McpImages count={images.length} load={loadImage} />}
            {!web && !r.stdoutTail && !r.stderrTail && r.output !== undefined && (
              <div>
                <span className="field-label">Output</span>
                <pre className="code-block">{argsText(r.output)}</pre>
              </div>
            )}
            {(r.filesChanged?.length ?? 0) > 0 && (
              <div>
                <span className="field-label">Files changed</span>
                <ul className="files mono">
                  {r.filesChanged!.map((f) => (
                    <li key={f}>{f}</li>
                  ))}
                </ul>
              </div>
            )}
          </>
        )}
        {step.critique &&
          (step.critique.source === 'heuristic' ? (
            // Without a critic model a rule of thumb over the exit status and output scores the step:
            // show its score, as the timeline's step.finished records it, and say what it is.
            <div className="critique" data-testid="critique">
              <span className="field-label">Critic</span>
              <div className="score-row">
                <meter min={0} max={1} low={0.4} high={0.7} optimum={1} value={step.critique.score} aria-label="Critic score" />
                <strong>{step.critique.score.toFixed(2)}</strong>
                <span className="muted small">rule of thumb, not a model's judgement (no critic model; from the exit status and output)</span>
              </div>
              <p>{step.critique.explanation}</p>
            </div>
          ) : (
            <div className="critique" data-testid="critique">
              <span className="field-label">Critic</span>
              <div className="score-row">
                <meter min={0} max={1} low={0.4} high={0.7} optimum={1} value={step.critique.score} aria-label="Critic score" />
                <strong>{step.critique.score.toFixed(2)}</strong>
                <span className="muted small">
                  {step.critique.source}
                  {step.critique.model ? ` · ${step.critique.model}` : ''}
                </span>
              </div>
              <p>{step.critique.explanation}</p>
            </div>
          ))}
        {!r && !step.critique && !step.error && step.state === 'pending' && <p className="muted">{runEnded ? 'Not run: the run ended first.' : 'Not run yet.'}</p>}
      </div>
    </section>
  );
}

/** WebPage is the page a web_fetch or browser step fetched: where it ended, its type, title and text. */
function WebPage({ web }: { web: WebResult }) {
  return (
    <div data-testid="web-page">
      <dl className="facts">
        <div>
          <dt>Final URL</dt>
          <dd className="mono break" data-testid="web-final-url">
            {web.finalUrl}
            {web.from && <span className="muted small"> (asked for {web.from})</span>}
          </dd>
        </div>
        {web.contentType && (
          <div>
            <dt>Type</dt>
            <dd className="mono" data-testid="web-content-type">
              {web.contentType}
            </dd>
          </div>
        )}
        {web.title && (
          <div>
            <dt>Title</dt>
            <dd>{web.title}</dd>
          </div>
        )}
      </dl>
      {web.text && (
        <div>
          <span className="field-label">Text{web.textCut ? ' (the start; stdout has it whole)' : ''}</span>
          <pre className="code-block out" data-testid="web-text">
            {web.text}
          </pre>
        </div>
      )}
    </div>
  );
}

/**
 * WebNotes is what a successful web step noted, none of it an error:
 * Chromium's own calls home, refused as always, and the page's requests
 * to hosts not approved (which may have left the page incomplete).
 */
function WebNotes({ web, notes }: { web: WebResult; notes: string[] }) {
  return (
    <>
      {notes.map((n) => (
        <p key={n} className="muted small">
          {n}
        </p>
      ))}
      {web.refused.length > 0 && (
        <p className="status-note small" data-testid="web-refused">
          The page’s requests to {web.refused.join(', ')} were refused, so nothing was sent to them. If the page looks incomplete, approve a step that names one, or
          allow it for the run or in Settings.
        </p>
      )}
      {web.chromiumNoise.length > 0 && (
        <p className="muted small" data-testid="web-chromium-noise">
          Chromium’s own background calls ({web.chromiumNoise.join(', ')}) were blocked, as always; the page does not need them.
        </p>
      )}
    </>
  );
}

function when(at: string) {
  return (
    <time dateTime={at} title={formatAbsolute(at)}>
      {formatSeconds(at)}
    </time>
  );
}

/** ApprovalHistory lists a step's requests and answers: the arguments as asked and as approved, who answered, when and why. */
function ApprovalHistory({ entries, runEnded }: { entries: ApprovalEntry[]; runEnded: boolean }) {
  return (
    <div data-testid="approval-history">
      <span className="field-label">Approvals</span>
      <ol className="approval-history">
        {entries.map((e) => {
          const a = e.answer;
          const edited = a?.editedArgs !== undefined;
          return (
            <li key={e.requestId}>
              {e.inheritedFrom && (
                <span className="muted" data-testid="approval-inherited">
                  Before the fork, in{' '}
                  <a href={href({ screen: 'run', runId: e.inheritedFrom })} className="mono">
                    {shortId(e.inheritedFrom)}
                  </a>
                  :{' '}
                </span>
              )}
              <span>
                Asked {when(e.askedAt)}
                {e.rule ? ` (rule ${e.rule}${e.risk ? `, ${e.risk} risk` : ''})` : ''}
                {'. '}
              </span>
              {a ? (
                <span data-testid="approval-answer">
                  {a.approved ? (edited ? 'Approved with edited arguments' : 'Approved as asked') : 'Denied'} in {a.by}, {when(a.at)}
                  {a.reason ? `: ${a.reason}` : ''}
                  {a.approved && a.network ? ' (network allowed)' : ''}.
                </span>
              ) : (
                <span className="muted">{runEnded ? 'Not answered: the run ended first.' : 'Not answered yet.'}</span>
              )}
              {edited && (
                <div className="side-by-side">
                  <div className="min0">
                    <span className="field-label">As asked</span>
                    <pre className="code-block" data-testid="args-asked">
                      {argsText(e.args)}
                    </pre>
                  </div>
                  <div className="min0">
                    <span className="field-label">As approved</span>
                    <pre className="code-block" data-testid="args-approved">
                      {argsText(a!.editedArgs)}
                    </pre>
                  </div>
                </div>
              )}
            </li>
          );
        })}
      </ol>
    </div>
  );
}

/** SearchResult is what a world_search step chose, the line the task takes, and the way to deliberate again on its world. */
function SearchResult({ search, stepId, onDeliberate }: { search: SearchSummary; stepId: string; onDeliberate?: ((s: SearchSummary) => void) | undefined }) {
  return (
    <div data-testid="search-result">
      <span className="field-label">Search</span>
      <p>
        Round {search.deliberationIndex} of the task&apos;s world chose <strong className="mono">{actionText(search.chosen)}</strong>
        {search.line.length > 0 && (
          <>
            ; its line is <span className="mono">{search.line.map(actionText).join(' ')}</span>
            {search.act
              ? ` (${search.line.length} ${search.line.length === 1 ? 'move' : 'moves'}, taken as the steps ${stepId}-move-1…)`
              : ' (not taken: the step said act false)'}
          </>
        )}
        .
      </p>
      <div className="row wrap">
        {onDeliberate && (
          <button
            type="button"
            className="button small"
            onClick={() => onDeliberate(search)}
            title="Search forks of the task's world again, from where it is now"
          >
            Deliberate…
          </button>
        )}
        <a className="button small" href={href({ screen: 'world', runId: search.run })}>
          Open the world
        </a>
      </div>
    </div>
  );
}
