import { useEffect, useRef, useState } from 'react';
import { type DivergenceType, type Domain, type DucklmApi, type Forked, type SeedPolicy, toBridgeError } from '../bridge';
import { SEED_POLICIES, checkDelta, divergencesFor } from '../lib/fork';
import { shortId } from '../lib/ids';
import './worlds.css';

interface ForkDialogProps {
  api: DucklmApi;
  checkpointId: string;
  parentRunId: string;
  domain: Domain;
  parentName: string;
  onClose: () => void;
  onForked: (f: Forked) => void;
}

/** ForkDialog is the delta editor: how the child diverges from the checkpoint, and its seed. */
export function ForkDialog({ api, checkpointId, parentRunId, domain, parentName, onClose, onForked }: ForkDialogProps) {
  const options = divergencesFor(domain);
  const [kind, setKind] = useState<DivergenceType>(options[0]!.id);
  const [delta, setDelta] = useState(options[0]!.template);
  const [touched, setTouched] = useState(false);
  const [policy, setPolicy] = useState<SeedPolicy>('inherit');
  const [name, setName] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const first = useRef<HTMLSelectElement>(null);

  useEffect(() => {
    first.current?.focus();
    const onKey = (e: KeyboardEvent) => e.key === 'Escape' && onClose();
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [onClose]);

  const option = options.find((o) => o.id === kind) ?? options[0]!;
  const problem = checkDelta(kind, delta, policy);

  const chooseKind = (k: DivergenceType) => {
    setKind(k);
    // An untouched delta follows the divergence; an edited one is the user's.
    if (!touched) setDelta(options.find((o) => o.id === k)?.template ?? '{}');
    if (k === 'seed_change' && policy === 'inherit') setPolicy('derive');
  };

  const submit = () => {
    if (problem) return;
    setBusy(true);
    setError(undefined);
    api
      .fork({ checkpointId, parentRunId, divergence: kind, delta: delta.trim() === '' ? '{}' : delta, seedPolicy: policy, name: name.trim(), deliberationIndex: 0 })
      .then(onForked, (e: unknown) => {
        setBusy(false);
        setError(toBridgeError(e).message);
      });
  };

  return (
    <div className="modal-backdrop" onMouseDown={(e) => e.target === e.currentTarget && onClose()}>
      <div className="modal panel" role="dialog" aria-modal="true" aria-labelledby="fork-title">
        <header className="panel-head">
          <h2 id="fork-title">Fork from checkpoint</h2>
          <span className="panel-meta mono" title={checkpointId}>
            {parentName} @ {shortId(checkpointId)}
          </span>
        </header>
        <div className="modal-body">
          <label className="field">
            <span className="field-label">Divergence</span>
            <select ref={first} className="input" value={kind} onChange={(e) => chooseKind(e.target.value as DivergenceType)}>
              {options.map((o) => (
                <option key={o.id} value={o.id}>
                  {o.label} ({o.id})
                </option>
              ))}
            </select>
            <span className="muted small">{option.hint}</span>
          </label>
          <label className="field">
            <span className="field-label">Delta (JSON)</span>
            <textarea
              className="input mono"
              rows={8}
              value={delta}
              onChange={(e) => {
                setTouched(true);
                setDelta(e.target.value);
              }}
              aria-label="Delta JSON"
              aria-invalid={problem !== undefined}
            />
            {problem ? <span className="inline-error small" data-testid="delta-problem">{problem}</span> : <span className="ok small">The delta has the right shape.</span>}
          </label>
          <fieldset className="field">
            <legend className="field-label">Seed policy</legend>
            <div className="segmented">
              {SEED_POLICIES.map((p) => (
                <label key={p.id} className={policy === p.id ? 'on' : undefined} title={p.hint}>
                  <input type="radio" name="seed-policy" checked={policy === p.id} onChange={() => setPolicy(p.id)} /> {p.label}
                </label>
              ))}
            </div>
            <span className="muted small">{SEED_POLICIES.find((p) => p.id === policy)?.hint}</span>
          </fieldset>
          <label className="field">
            <span className="field-label">Name of the child (optional)</span>
            <input className="input" value={name} onChange={(e) => setName(e.target.value)} placeholder={`${parentName} / ${kind}`} />
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
          <button type="button" className="button primary" onClick={submit} disabled={busy || problem !== undefined}>
            {busy ? 'Forking…' : 'Create child world'}
          </button>
        </footer>
      </div>
    </div>
  );
}
