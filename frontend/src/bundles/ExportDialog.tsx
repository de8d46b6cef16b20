import { useEffect, useRef, useState } from 'react';
import { type BundleReport, type BundleScope, type DucklmApi, type ExportResult, copyText, toBridgeError } from '../bridge';
import { formatBytes } from '../lib/format';
import { shortId } from '../lib/ids';
import { CopyButton } from '../ui/CopyButton';
import { BundleReportView } from './BundleReport';
import { PathField } from './PathField';
import { type RootKind, countsText, defaultScope, formatFingerprint, newOp, progressText, scopeOptions } from './bundle';
import { useOpProgress } from './useOpProgress';
import './bundles.css';

interface ExportDialogProps {
  api: DucklmApi;
  /** The run or world to export. */
  root: string;
  kind: RootKind;
  /** Its name, for the title and the file name. */
  name: string;
  /** Whether it was forked from another world (it then needs its ancestry). */
  forked: boolean;
  onClose: () => void;
}

type Phase =
  | { step: 'form'; error?: string }
  | { step: 'exporting'; op: string }
  | { step: 'done'; result: ExportResult; verify?: { status: 'running'; op: string } | { status: 'done'; report: BundleReport } | { status: 'error'; message: string } };

/** ExportDialog writes a run or a world to one signed .ducklm file: what goes in, where, then what was written. */
export function ExportDialog({ api, root, kind, name, forked, onClose }: ExportDialogProps) {
  const options = scopeOptions(kind, forked);
  const [scope, setScope] = useState<BundleScope>(defaultScope(forked));
  const [path, setPath] = useState('');
  const [replace, setReplace] = useState(false);
  const [native, setNative] = useState<boolean>();
  const [phase, setPhase] = useState<Phase>({ step: 'form' });
  const [browseError, setBrowseError] = useState<string>();
  const first = useRef<HTMLInputElement>(null);
  const busy = phase.step === 'exporting' || (phase.step === 'done' && phase.verify?.status === 'running');
  const op = phase.step === 'exporting' ? phase.op : phase.step === 'done' && phase.verify?.status === 'running' ? phase.verify.op : '';
  const progress = useOpProgress(api, op);

  useEffect(() => {
    let live = true;
    api.nativeDialogs().then(
      (n) => live && setNative(n),
      () => live && setNative(false),
    );
    api.suggestBundlePath(name).then(
      (p) => live && setPath((cur) => (cur === '' ? p : cur)),
      () => undefined, // the field stays empty and says what to type
    );
    return () => {
      live = false;
    };
  }, [api, name]);

  useEffect(() => {
    first.current?.focus();
    const onKey = (e: KeyboardEvent) => e.key === 'Escape' && !busy && onClose();
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [onClose, busy]);

  const browse = () => {
    setBrowseError(undefined);
    api.chooseBundleToSave(`Export ${name}`, name).then(
      (p) => {
        if (p === '') return;
        setPath(p);
        setReplace(true); // the save dialog asked before choosing an existing file
      },
      (e: unknown) => setBrowseError(toBridgeError(e).message),
    );
  };

  const submit = () => {
    const id = newOp('export');
    setPhase({ step: 'exporting', op: id });
    api.exportBundle({ root, scope, path: path.trim(), replace, op: id }).then(
      (result) => setPhase({ step: 'done', result }),
      (e: unknown) => setPhase({ step: 'form', error: toBridgeError(e).message }),
    );
  };

  const verify = (result: ExportResult) => {
    const id = newOp('verify');
    setPhase({ step: 'done', result, verify: { status: 'running', op: id } });
    api.verifyBundle(result.file, id).then(
      (report) => setPhase({ step: 'done', result, verify: { status: 'done', report } }),
      (e: unknown) => setPhase({ step: 'done', result, verify: { status: 'error', message: toBridgeError(e).message } }),
    );
  };

  return (
    <div className="modal-backdrop" onMouseDown={(e) => e.target === e.currentTarget && !busy && onClose()}>
      <div className="modal panel bundle-modal" role="dialog" aria-modal="true" aria-labelledby="export-title">
        <header className="panel-head">
          <h2 id="export-title">Export {kind === 'run' ? 'run' : 'world'}</h2>
          <span className="panel-meta" title={root}>
            {name} · <span className="mono">{shortId(root)}</span>
          </span>
        </header>
        <div className="modal-body">
          {phase.step !== 'done' && (
            <>
              <fieldset className="field bundle-scopes" disabled={busy}>
                <legend className="field-label">What goes in the bundle</legend>
                {options.map((o, i) => (
                  <label key={o.id} className={`radio-row bundle-scope${o.unavailable ? ' unavailable' : ''}`}>
                    <input
                      ref={i === 0 ? first : undefined}
                      type="radio"
                      name="bundle-scope"
                      value={o.id}
                      checked={scope === o.id}
                      disabled={o.unavailable !== undefined}
                      onChange={() => setScope(o.id)}
                    />
                    <span className="min0">
                      <span className="bundle-scope-label">{o.label}</span>
                      <span className="muted small block">{o.unavailable ?? o.includes}</span>
                    </span>
                  </label>
                ))}
              </fieldset>
              <PathField
                label="Bundle file"
                value={path}
                onChange={(p) => {
                  setPath(p);
                  setReplace(false);
                }}
                native={native}
                onBrowse={browse}
                placeholder="~/Documents/export.ducklm"
                browserNote="ducklm writes the bundle on this machine, the one running ducklm serve, at the path below."
                disabled={busy}
              />
              {browseError && <p className="inline-error small">{browseError}</p>}
              <label className="check-row small">
                <input type="checkbox" checked={replace} onChange={(e) => setReplace(e.target.checked)} disabled={busy} />
                <span>Replace the file if it already exists</span>
              </label>
              <p className="muted small">The bundle is signed with this installation's key, so whoever imports it can tell it came from here and was not changed.</p>
              {phase.step === 'exporting' && <ProgressLine text={progress ? progressText(progress) : 'Collecting what goes in the bundle…'} progress={progress} />}
              {phase.step === 'form' && phase.error && (
                <p className="inline-error" role="alert">
                  {phase.error}
                </p>
              )}
            </>
          )}
          {phase.step === 'done' && (
            <>
              <p className="status-note ok" role="status">
                Exported to a signed bundle.
              </p>
              <dl className="facts bundle-facts">
                <div className="fact">
                  <dt>File</dt>
                  <dd>
                    <span className="path" title={phase.result.file} data-testid="export-file">
                      {phase.result.file}
                    </span>
                    <CopyButton text={phase.result.file} what="bundle path" copy={copyText} />
                  </dd>
                </div>
                <div className="fact">
                  <dt>Size</dt>
                  <dd>{formatBytes(phase.result.bytes)}</dd>
                </div>
                <div className="fact">
                  <dt>Holds</dt>
                  <dd>{countsText(phase.result.counts)}</dd>
                </div>
                <div className="fact">
                  <dt>Signed by</dt>
                  <dd className="fingerprint mono" title="This installation's key fingerprint: share it so others can trust your bundles">
                    {phase.result.signer ? formatFingerprint(phase.result.signer) : 'unsigned'}
                  </dd>
                </div>
              </dl>
              {phase.verify?.status === 'running' && <ProgressLine text={progress ? progressText(progress) : 'Checking the bundle…'} progress={progress} />}
              {phase.verify?.status === 'error' && (
                <p className="inline-error" role="alert">
                  {phase.verify.message}
                </p>
              )}
              {phase.verify?.status === 'done' && <BundleReportView report={phase.verify.report} summary={false} />}
            </>
          )}
        </div>
        <footer className="modal-foot">
          {phase.step === 'done' ? (
            <>
              <button type="button" className="button" onClick={() => verify(phase.result)} disabled={busy}>
                {phase.verify?.status === 'done' ? 'Verify again' : 'Verify'}
              </button>
              <button type="button" className="button primary" onClick={onClose} disabled={busy}>
                Done
              </button>
            </>
          ) : (
            <>
              <button type="button" className="button" onClick={onClose} disabled={busy}>
                Cancel
              </button>
              <button type="button" className="button primary" onClick={submit} disabled={busy || path.trim() === ''}>
                {busy ? 'Exporting…' : 'Export'}
              </button>
            </>
          )}
        </footer>
      </div>
    </div>
  );
}

/** ProgressLine shows long work's progress with its words. */
export function ProgressLine({ text, progress }: { text: string; progress?: { done: number; total: number } }) {
  return (
    <div className="progress-row" role="status" aria-live="polite">
      {progress && progress.total > 0 ? <progress value={progress.done} max={progress.total} aria-label={text} /> : <span className="spinner" aria-hidden="true" />}
      <span className="small">{text}</span>
    </div>
  );
}
