import { useEffect, useState } from 'react';
import type { DucklmApi } from '../bridge';
import { useLoad, useThrottled } from '../ui/useLoad';
import { appliedLine, roundLine } from '../lib/round';
import { RoundResult } from './DeliberateDialog';
import './worlds.css';

/**
 * RoundsPanel is what this run's deliberations did, newest round first:
 * where each stood, what it spent and what it chose, whether it was made in
 * the window, by `ducklm world deliberate` or by a task; a round opens to
 * its ranked candidates and the best two side by side. A run that never
 * deliberated shows no panel.
 */
export function RoundsPanel({ api, runId, worldId }: { api: DucklmApi; runId: string; worldId: string }) {
  const [rounds, reload] = useLoad(() => api.deliberations(runId), [api, runId]);
  const refresh = useThrottled(reload, 1000);
  // A new round, or a step of this run (one may take a round's choice: the round then reads applied).
  useEffect(
    () => api.onLedgerEvents((batch) => batch.some((e) => e.type === 'deliberation.round' || (e.stream === runId && e.type === 'world.step')) && refresh()),
    [api, refresh, runId],
  );
  const [open, setOpen] = useState<number>();
  const list = [...(rounds.value ?? [])].reverse();
  if (rounds.status === 'loading' || (rounds.status === 'ready' && list.length === 0)) return null;
  return (
    <section className="panel" aria-labelledby="rounds-title">
      <header className="panel-head">
        <h2 id="rounds-title">Deliberations</h2>
        <span className="panel-meta">
          {list.length} {list.length === 1 ? 'round' : 'rounds'}, newest first
        </span>
      </header>
      {rounds.status === 'error' && <p className="inline-error pad small">{rounds.message}</p>}
      <ul className="rounds-list">
        {list.map((r) => (
          <li key={r.deliberationIndex} className="round-item">
            <button
              type="button"
              className="round-head"
              aria-expanded={open === r.deliberationIndex}
              onClick={() => setOpen(open === r.deliberationIndex ? undefined : r.deliberationIndex)}
            >
              <span className="round-title">
                Round {r.deliberationIndex} <span className="muted">at t={r.parentTime}</span>
              </span>
              <span className="small">{roundLine(r)}</span>
              <span className={`badge ${r.appliedAt ? 'applied-badge' : 'status'}`} data-testid="round-applied">
                {appliedLine(r)}
              </span>
            </button>
            {open === r.deliberationIndex && (
              <div className="pad">
                <RoundResult round={r} worldId={worldId} onWorkers={false} />
              </div>
            )}
          </li>
        ))}
      </ul>
    </section>
  );
}
