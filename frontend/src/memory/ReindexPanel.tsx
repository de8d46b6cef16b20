import { useEffect, useRef, useState } from 'react';
import { type DucklmApi, type MemoryStatus, type Progress, type ReindexResult, toBridgeError } from '../bridge';
import { formatNanos } from '../lib/format';
import { useLoad } from '../ui/useLoad';
import { PHASE_CHECK, countText, defaultEmbedder, embedderOptions, isCurrent, newOp, progressText, sentence } from './format';

type Job =
  | { kind: 'idle' }
  | { kind: 'running'; op: string; model: string; progress: Pick<Progress, 'phase' | 'done' | 'total'>; cancelling: boolean }
  | { kind: 'done'; result: ReindexResult }
  | { kind: 'failed'; model: string; message: string };

interface Props {
  api: DucklmApi;
  status: MemoryStatus;
  /** Called when a re-embedding ends, whichever way: the status and list change. */
  onFinished: () => void;
  onClose: () => void;
}

/**
 * ReindexPanel re-embeds every memory with another model: the built-in
 * embedder or one of Ollama's. The work runs in the backend on the store the
 * running app uses, so searches keep answering with the old model until the
 * new one is complete; progress arrives live, by the op id chosen here.
 */
export function ReindexPanel({ api, status, onFinished, onClose }: Props) {
  const [choices, reloadChoices] = useLoad(() => api.memoryEmbedders(), [api]);
  const [model, setModel] = useState('');
  const [job, setJob] = useState<Job>({ kind: 'idle' });
  const opRef = useRef('');
  const mounted = useRef(true);
  useEffect(() => () => void (mounted.current = false), []);

  // The form proposes a model once the choices arrive.
  useEffect(() => {
    if (choices.status === 'ready' && model === '') setModel(defaultEmbedder(choices.value));
  }, [choices, model]);

  useEffect(
    () =>
      api.onProgress((batch) => {
        const p = batch.find((x) => x.op === opRef.current);
        if (!p) return;
        setJob((j) => (j.kind === 'running' && j.op === p.op ? { ...j, progress: p } : j));
      }),
    [api],
  );

  const start = () => {
    const op = newOp();
    const chosen = model.trim();
    opRef.current = op;
    setJob({ kind: 'running', op, model: chosen, progress: { phase: PHASE_CHECK, done: 0, total: 0 }, cancelling: false });
    api.reindexMemories({ model: chosen, op }).then(
      (result) => {
        if (mounted.current) setJob({ kind: 'done', result });
        reloadChoices();
        onFinished();
      },
      (e: unknown) => {
        if (mounted.current) setJob({ kind: 'failed', model: chosen, message: toBridgeError(e).message });
        onFinished();
      },
    );
  };

  const cancel = () => {
    setJob((j) => (j.kind === 'running' ? { ...j, cancelling: true } : j));
    api.cancelReindex().catch(() => undefined);
  };

  const running = job.kind === 'running';
  const c = choices.value;
  const same = isCurrent(model, status.model) && status.stale === 0;

  return (
    <section className="panel reindex" aria-labelledby="reindex-title">
      <header className="panel-head">
        <h2 id="reindex-title">Change the embedding model</h2>
        <span className="panel-meta">Re-embeds {countText(status.memories)}; searches keep working meanwhile.</span>
        <button type="button" className="button small" onClick={onClose} disabled={running}>
          Close
        </button>
      </header>
      <div className="pad stack">
        {choices.status === 'loading' && (
          <p className="loading">
            <span className="spinner" aria-hidden="true" /> Asking Ollama for its models…
          </p>
        )}
        {choices.status === 'error' && (
          <p className="inline-error" role="alert">
            {sentence(choices.message)}{' '}
            <button type="button" className="link-button" onClick={reloadChoices}>
              Try again
            </button>
          </p>
        )}
        {c && (
          <>
            <label className="inline-field">
              <span>Embedding model</span>
              <select className="input grow" aria-label="Embedding model" value={model} disabled={running} onChange={(e) => setModel(e.target.value)}>
                {(['Built-in', 'Ollama embedding models', 'Other Ollama models'] as const).map((group) => {
                  const opts = embedderOptions(c).filter((o) => o.group === group);
                  return opts.length === 0 ? null : (
                    <optgroup key={group} label={group}>
                      {opts.map((o) => (
                        <option key={o.value} value={o.value}>
                          {o.label}
                        </option>
                      ))}
                    </optgroup>
                  );
                })}
              </select>
            </label>
            {c.ollama.reachable ? (
              c.embedding.length === 0 && (
                <p className="inline-warn small">
                  Ollama at {c.ollama.host} has no embedding model. Pull one (<code>ollama pull nomic-embed-text</code>) and reopen this panel, or keep the
                  built-in embedder.
                </p>
              )
            ) : (
              <p className="status-note small">
                Ollama is not reachable at {c.ollama.host}
                {c.ollama.error ? ` (${c.ollama.error.replace(/[.]$/, '')})` : ''}. Start it with <code>ollama serve</code> to use its embedding
                models; the built-in embedder works without it.
              </p>
            )}
            <p className="muted small">
              The built-in embedder is deterministic and offline; it matches shared words and word pieces, not meanings. An Ollama embedding
              model also finds paraphrases. The model you choose becomes the embedder in Settings.
            </p>
          </>
        )}

        {job.kind === 'running' && (
          <div className="stack" role="status" aria-live="polite" data-testid="reindex-progress">
            <div className="progress-row">
              {job.progress.total > 0 ? (
                <progress max={job.progress.total} value={job.progress.done} aria-label="Re-embedding progress" />
              ) : (
                <progress aria-label="Re-embedding progress" />
              )}
              <button type="button" className="button small" onClick={cancel} disabled={job.cancelling}>
                {job.cancelling ? 'Cancelling…' : 'Cancel'}
              </button>
            </div>
            <span className="small">{progressText(job.progress, job.model)}</span>
          </div>
        )}
        {job.kind === 'done' && (
          <p className="status-note ok" role="status" data-testid="reindex-done">
            Re-embedded {countText(job.result.reembedded)} with {job.result.model} in {formatNanos(job.result.tookNs)}. Searches now use{' '}
            {job.result.model}
            {job.result.previous !== job.result.model ? ` instead of ${job.result.previous}` : ''}.
            {job.result.settingsSaved ? ' Settings now name it as the embedder.' : ''}
          </p>
        )}
        {job.kind === 'failed' && (
          <p className="inline-error" role="alert" data-testid="reindex-error">
            {sentence(job.message)} Nothing changed: searches still use {status.model}.
          </p>
        )}

        <div className="actions">
          <button type="button" className="button primary" disabled={!c || running || model.trim() === '' || same} onClick={start}>
            {running ? 'Re-embedding…' : same ? `Already using ${status.model}` : `Re-embed with ${model || '…'}`}
          </button>
          {status.stale > 0 && !running && (
            <button type="button" className="button" onClick={() => setModel(status.model)} title="Embed the memories an interrupted re-embedding left behind">
              Repair with {status.model}
            </button>
          )}
        </div>
      </div>
    </section>
  );
}
