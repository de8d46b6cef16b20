import { useState } from 'react';
import { type DucklmApi, type MemoryDetail, copyText, toBridgeError } from '../bridge';
import { shortId } from '../lib/ids';
import { href } from '../lib/route';
import { formatAbsolute, formatRelative } from '../lib/time';
import { CopyButton } from '../ui/CopyButton';
import type { Load } from '../ui/useLoad';
import { realityBadge, sentence } from './format';

interface Props {
  api: DucklmApi;
  detail: Load<MemoryDetail>;
  now: number;
  onRetry: () => void;
  onDeleted: (id: string) => void;
  onClose: () => void;
}

type Deleting = { step: 'idle' } | { step: 'confirm' } | { step: 'busy' } | { step: 'failed'; message: string };

/** MemoryDetailPanel shows one memory: its full text, what it is, and every run and event it came from. */
export function MemoryDetailPanel({ api, detail, now, onRetry, onDeleted, onClose }: Props) {
  const [deleting, setDeleting] = useState<Deleting>({ step: 'idle' });

  const value = detail.value;
  if (!value && detail.status !== 'error') {
    return (
      <section className="panel memory-detail" aria-label="Memory detail">
        <p className="loading pad">
          <span className="spinner" aria-hidden="true" /> Opening the memory…
        </p>
      </section>
    );
  }
  if (!value) {
    return (
      <section className="panel memory-detail" aria-label="Memory detail" role="alert">
        <div className="pad stack">
          <p className="inline-error">{sentence(detail.message)} It may have been deleted: pick another memory, or try again.</p>
          <div className="actions">
            <button type="button" className="button small" onClick={onRetry}>
              Try again
            </button>
            <button type="button" className="button small" onClick={onClose}>
              Close
            </button>
          </div>
        </div>
      </section>
    );
  }
  const { memory: m, dimensions, sources } = value;
  const badge = realityBadge(m.provenance);

  const remove = () => {
    setDeleting({ step: 'busy' });
    api.deleteMemory(m.id).then(
      () => onDeleted(m.id),
      (e: unknown) => setDeleting({ step: 'failed', message: toBridgeError(e).message }),
    );
  };

  return (
    <section className="panel memory-detail" aria-label="Memory detail" data-memory={m.id}>
      <header className="panel-head">
        <h2>Memory</h2>
        <span className="panel-meta mono" title={m.id}>
          {shortId(m.id)}
        </span>
        <CopyButton text={m.id} what="memory id" copy={copyText} />
        <button type="button" className="icon-button" aria-label="Close the memory" title="Close" onClick={onClose}>
          ×
        </button>
      </header>
      <div className="pad stack">
        <div className="row wrap">
          <span className={`badge mem-type type-${m.type}`}>{m.type}</span>
          <span className={`badge reality-${badge.reality}`} title={badge.title}>
            {badge.label}
          </span>
          {m.provenance.worldId && <span className="muted small mono">world {shortId(m.provenance.worldId)}</span>}
        </div>
        <p className="memory-text" data-testid="memory-text">
          {m.text}
        </p>
        <dl className="facts-inline">
          <div>
            <dt>Created</dt>
            <dd title={formatAbsolute(m.createdAt)}>{formatRelative(m.createdAt, now)}</dd>
          </div>
          <div>
            <dt>Weight</dt>
            <dd>{m.weight.toFixed(2)}</dd>
          </div>
          <div>
            <dt>Merged</dt>
            <dd>{m.mergedCount === 0 ? 'never' : `${m.mergedCount}×, last ${formatRelative(m.mergedAt ?? m.updatedAt, now)}`}</dd>
          </div>
          <div>
            <dt>Embedding</dt>
            <dd className="mono">
              {m.embeddingModel} ({dimensions} dimensions)
            </dd>
          </div>
        </dl>

        <h3 className="memory-h">Where it came from</h3>
        {sources.length === 0 ? (
          <p className="muted">No provenance was recorded for this memory.</p>
        ) : (
          <ol className="source-list" aria-label="Provenance">
            {sources.map((s, i) => {
              const run = s.stream ?? s.runId;
              return (
                <li key={`${s.eventId ?? ''}-${i}`} className="source-item" data-testid="memory-source">
                  <div className="row wrap">
                    {run ? (
                      <a href={href({ screen: 'run', runId: run })} className="mono" title={`Open run ${run}`}>
                        {shortId(run)}
                      </a>
                    ) : (
                      <span className="muted">no run</span>
                    )}
                    {s.step && <span className="chip">{s.step}</span>}
                    {run && s.seq ? (
                      <a href={href({ screen: 'timeline', runId: run, seq: s.seq })} title={`The timeline of ${run} at event ${s.seq}`}>
                        {s.eventType ?? 'event'} #{s.seq} in the timeline
                      </a>
                    ) : (
                      s.eventId && <span className="muted small mono">event {shortId(s.eventId)} (not in this ledger)</span>
                    )}
                  </div>
                  <div className="muted small">
                    <span title={formatAbsolute(s.addedAt)}>
                      {i === 0 ? 'first written' : 'merged in'} {formatRelative(s.addedAt, now)}
                    </span>{' '}
                    · critic score {s.criticScore.toFixed(2)} · worth {s.worth.toFixed(2)}
                    {s.reality === 'world_local' && ` · simulated in ${s.worldId ?? 'a world'}, a hypothesis`}
                  </div>
                  {s.url && (
                    <div className="small" data-testid="memory-source-url">
                      <span className="mono break">{s.url}</span>
                      {s.observedAt && (
                        <span className="muted" title={s.observedAt}>
                          {' '}
                          answered {formatAbsolute(s.observedAt)}
                        </span>
                      )}
                    </div>
                  )}
                </li>
              );
            })}
          </ol>
        )}

        <div className="memory-delete">
          {deleting.step === 'idle' && (
            <button type="button" className="button danger small" onClick={() => setDeleting({ step: 'confirm' })}>
              Delete…
            </button>
          )}
          {(deleting.step === 'confirm' || deleting.step === 'busy' || deleting.step === 'failed') && (
            <div className="confirm-box" role="group" aria-label="Confirm deletion">
              <p>
                Delete this memory? Runs will no longer recall it. The events that recorded it stay in the ledger; this cannot be undone.
              </p>
              {deleting.step === 'failed' && (
                <p className="inline-error" role="alert">
                  {sentence(deleting.message)} Nothing was deleted; try again.
                </p>
              )}
              <div className="actions">
                <button type="button" className="button danger" disabled={deleting.step === 'busy'} onClick={remove}>
                  {deleting.step === 'busy' ? 'Deleting…' : 'Delete memory'}
                </button>
                <button type="button" className="button" disabled={deleting.step === 'busy'} onClick={() => setDeleting({ step: 'idle' })}>
                  Keep it
                </button>
              </div>
            </div>
          )}
        </div>
      </div>
    </section>
  );
}
