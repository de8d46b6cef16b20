import { useEffect, useRef, useState } from 'react';
import { type BundleReport, type DucklmApi, type ImportResult, toBridgeError } from '../bridge';
import { BundleReportView } from './BundleReport';
import { ProgressLine } from './ExportDialog';
import { PathField } from './PathField';
import { countsText, newOp, progressText } from './bundle';
import { useOpProgress } from './useOpProgress';
import './bundles.css';

interface ImportDialogProps {
  api: DucklmApi;
  onClose: () => void;
  /** Called after an import wrote something, so the screen behind can reload. */
  onImported?: (r: ImportResult) => void;
}

type Phase =
  | { step: 'choose'; error?: string }
  | { step: 'verifying'; op: string }
  | { step: 'checked'; report: BundleReport }
  | { step: 'importing'; op: string; report: BundleReport }
  | { step: 'done'; result: ImportResult };

/**
 * ImportDialog brings a .ducklm bundle in: choose the file, see what
 * verifying it found (nothing is written yet), decide, import, then open
 * what arrived. A signer this installation does not know is said plainly,
 * and importing anyway is the user's explicit choice.
 */
export function ImportDialog({ api, onClose, onImported }: ImportDialogProps) {
  const [path, setPath] = useState('');
  const [native, setNative] = useState<boolean>();
  const [phase, setPhase] = useState<Phase>({ step: 'choose' });
  const [anyway, setAnyway] = useState(false);
  const [browseError, setBrowseError] = useState<string>();
  const busy = phase.step === 'verifying' || phase.step === 'importing';
  const progress = useOpProgress(api, busy ? phase.op : '');
  const first = useRef<HTMLDivElement>(null);

  useEffect(() => {
    let live = true;
    api.nativeDialogs().then(
      (n) => live && setNative(n),
      () => live && setNative(false),
    );
    return () => {
      live = false;
    };
  }, [api]);

  useEffect(() => {
    first.current?.querySelector<HTMLInputElement>('input')?.focus();
    const onKey = (e: KeyboardEvent) => e.key === 'Escape' && !busy && onClose();
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [onClose, busy]);

  const check = (file: string) => {
    const op = newOp('verify');
    setAnyway(false);
    setPhase({ step: 'verifying', op });
    api.verifyBundle(file.trim(), op).then(
      (report) => setPhase({ step: 'checked', report }),
      (e: unknown) => setPhase({ step: 'choose', error: toBridgeError(e).message }),
    );
  };

  const browse = () => {
    setBrowseError(undefined);
    api.chooseBundleToOpen('Import a ducklm bundle').then(
      (p) => {
        if (p === '') return;
        setPath(p);
        check(p);
      },
      (e: unknown) => setBrowseError(toBridgeError(e).message),
    );
  };

  const runImport = (report: BundleReport) => {
    const op = newOp('import');
    setPhase({ step: 'importing', op, report });
    api.importBundle({ path: report.file, allowUnsigned: !report.trusted && anyway, op }).then(
      (result) => {
        setPhase({ step: 'done', result });
        if (result.imported && !result.alreadyPresent) onImported?.(result);
      },
      (e: unknown) => setPhase({ step: 'choose', error: toBridgeError(e).message }),
    );
  };

  const [trustError, setTrustError] = useState<string>();
  const trust = (report: BundleReport) => {
    setTrustError(undefined);
    api.trustSigner(report.signer ?? '', report.file).then(
      () => check(report.file), // the report now says the signer is trusted
      (e: unknown) => setTrustError(toBridgeError(e).message),
    );
  };

  const report = phase.step === 'checked' || phase.step === 'importing' ? phase.report : undefined;
  const canImport = report !== undefined && report.ok && (report.trusted || anyway) && !busy;
  // The trust choice sits beside the Import button it enables, never below the fold.
  const askTrust = report !== undefined && report.ok && !report.trusted && phase.step !== 'done';

  return (
    <div className="modal-backdrop" onMouseDown={(e) => e.target === e.currentTarget && !busy && onClose()}>
      <div className="modal panel bundle-modal" role="dialog" aria-modal="true" aria-labelledby="import-title">
        <header className="panel-head">
          <h2 id="import-title">Import a bundle</h2>
          <span className="panel-meta">nothing is written until you import</span>
        </header>
        <div className="modal-body" ref={first}>
          {phase.step !== 'done' && (
            <>
              <PathField
                label="Bundle file (.ducklm)"
                value={path}
                onChange={(p) => {
                  setPath(p);
                  if (phase.step === 'checked') setPhase({ step: 'choose' });
                }}
                native={native}
                onBrowse={browse}
                placeholder="~/Downloads/export.ducklm"
                browserNote="ducklm reads the bundle from this machine, the one running ducklm serve, at the path below."
                disabled={busy}
              />
              {browseError && <p className="inline-error small">{browseError}</p>}
              {phase.step === 'choose' && phase.error && (
                <p className="inline-error" role="alert">
                  {phase.error}
                </p>
              )}
              {phase.step === 'verifying' && <ProgressLine text={progress ? progressText(progress) : 'Checking the bundle…'} progress={progress} />}
              {report && <BundleReportView report={report} />}
              {report && !report.ok && <p className="muted small">Nothing was written. Choose another file, or ask for a fresh export.</p>}
              {report?.ok && !report.trusted && (
                <div className="inline-warn bundle-trust" role="group" aria-label="Your decision">
                  <p>
                    {report.signed
                      ? 'The bundle is intact, but its signer is not a key this installation trusts, so nothing here vouches for where it came from.'
                      : 'The bundle is intact, but unsigned, so nothing vouches for where it came from.'}
                  </p>
                  <p className="small">Tick “I trust where this file came from” beside Import to import it anyway.</p>
                  {report.signed && report.signer && (
                    <p className="small">
                      <button type="button" className="button" onClick={() => trust(report)} disabled={busy}>
                        Trust this signer from now on
                      </button>{' '}
                      adds its fingerprint to the trusted_keys file in ducklm's data directory: its bundles then import without asking.
                    </p>
                  )}
                  {trustError && (
                    <p className="inline-error small" role="alert">
                      {trustError}
                    </p>
                  )}
                </div>
              )}
              {phase.step === 'importing' && <ProgressLine text={progress ? progressText(progress) : 'Importing…'} progress={progress} />}
            </>
          )}
          {phase.step === 'done' && <ImportOutcome result={phase.result} />}
        </div>
        <footer className="modal-foot">
          {phase.step === 'done' ? (
            <>
              <button
                type="button"
                className="button"
                onClick={() => {
                  setPath('');
                  setPhase({ step: 'choose' });
                }}
              >
                Import another
              </button>
              <button type="button" className="button primary" onClick={onClose}>
                Done
              </button>
            </>
          ) : (
            <>
              <button type="button" className="button" onClick={onClose} disabled={busy}>
                Cancel
              </button>
              {report === undefined || phase.step === 'verifying' ? (
                <button type="button" className="button primary" onClick={() => check(path)} disabled={busy || path.trim() === ''}>
                  {phase.step === 'verifying' ? 'Checking…' : 'Check bundle'}
                </button>
              ) : (
                <>
                  {askTrust && (
                    <label className="check-row foot-choice" data-testid="trust-anyway">
                      <input type="checkbox" checked={anyway} onChange={(e) => setAnyway(e.target.checked)} disabled={busy} />
                      <span>I trust where this file came from: import it anyway</span>
                    </label>
                  )}
                  {report.ok ? null : <span className="muted small foot-why">The bundle did not check out: nothing to import.</span>}
                  <button type="button" className="button primary" onClick={() => runImport(report)} disabled={!canImport}>
                    {phase.step === 'importing' ? 'Importing…' : 'Import'}
                  </button>
                </>
              )}
            </>
          )}
        </footer>
      </div>
    </div>
  );
}

/** ImportOutcome says what an import did, and links to what arrived. */
function ImportOutcome({ result: r }: { result: ImportResult }) {
  if (!r.imported) {
    return (
      <>
        <p className="problems bundle-verdict" role="alert">
          {r.problem ?? 'The bundle was refused; nothing was written.'}
        </p>
        <BundleReportView report={r.report} />
      </>
    );
  }
  return (
    <>
      <p className="status-note ok" role="status">
        {r.alreadyPresent
          ? `Already here: this installation held everything in the bundle (${countsText(r.report.counts)}); nothing changed.`
          : `Imported: added ${countsText(r.added)}${r.updated > 0 ? `; ${r.updated} run${r.updated === 1 ? '' : 's'} moved on` : ''}.`}
      </p>
      <BundleReportView report={r.report} links added={r.addedIds} />
    </>
  );
}
