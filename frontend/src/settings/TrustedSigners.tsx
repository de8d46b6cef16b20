import { useEffect, useRef, useState } from 'react';
import { type DucklmApi, type TrustedSigner, toBridgeError } from '../bridge';
import { sentence } from '../lib/format';
import { CopyButton } from '../ui/CopyButton';
import { useLoad } from '../ui/useLoad';

interface TrustedSignersProps {
  api: DucklmApi;
  copy: (text: string) => Promise<void>;
}

/** Stopping trust in one signer: asked, running, or refused with the backend's sentence. */
type Forgetting = { fingerprint: string; step: 'confirm' | 'busy' } | { fingerprint: string; step: 'failed'; message: string } | undefined;

/**
 * TrustedSignersSection shows the fingerprint this installation signs its
 * bundles with, and the signers whose bundles import here without asking,
 * each of which can stop being trusted after a confirmation.
 */
export function TrustedSignersSection({ api, copy }: TrustedSignersProps) {
  const [load, reload] = useLoad(() => api.trustedSigners(), [api]);
  const [forgetting, setForgetting] = useState<Forgetting>();
  const [notice, setNotice] = useState<string>();

  const forget = (s: TrustedSigner) => {
    setForgetting({ fingerprint: s.fingerprint, step: 'busy' });
    setNotice(undefined);
    api.forgetSigner(s.fingerprint).then(
      (forgot) => {
        setForgetting(undefined);
        setNotice(
          forgot
            ? `${s.formatted} is no longer trusted: its bundles ask again before they import.`
            : `${s.formatted} was not listed any more: trusted_keys changed meanwhile.`,
        );
        reload();
      },
      (e: unknown) => setForgetting({ fingerprint: s.fingerprint, step: 'failed', message: toBridgeError(e).message }),
    );
  };

  const value = load.value;
  return (
    <section className="panel settings-section trusted-signers" aria-labelledby="set-signers">
      <div className="panel-head">
        <h2 id="set-signers">Trusted signers</h2>
        <span className="panel-meta">Bundles they sign import without asking.</span>
      </div>
      <div className="settings-body">
        {load.status === 'loading' && <p className="muted small">Reading the trusted signers…</p>}
        {load.status === 'error' && (
          <div className="row" role="alert">
            <p className="inline-error small grow">The trusted signers could not be read: {sentence(load.message)}</p>
            <button type="button" className="button small" onClick={reload}>
              Try again
            </button>
          </div>
        )}
        {value && (
          <>
            <p className="signer-own-label small">Your bundles are signed as</p>
            <div className="row signer-own">
              <code className="mono fingerprint" data-testid="own-fingerprint">
                {value.own}
              </code>
              <CopyButton text={value.own} what="your signing fingerprint" copy={copy} />
            </div>
            <p className="muted small">Give this fingerprint to whoever imports your bundles, so they can check it and trust it.</p>

            {notice && (
              <p className="status-note ok small" role="status">
                {notice}
              </p>
            )}

            {value.signers.length === 0 ? (
              <p className="muted small signer-empty" data-testid="signers-empty">
                No other signer is trusted yet. A signer becomes trusted when you import one of its bundles and choose “Trust this signer
                from now on”, or when its fingerprint is added to <span className="mono">{value.file}</span>.
              </p>
            ) : (
              <ul className="signer-list" aria-label="Trusted signers">
                {value.signers.map((s) => (
                  <SignerRow
                    key={s.fingerprint}
                    signer={s}
                    forgetting={forgetting?.fingerprint === s.fingerprint ? forgetting : undefined}
                    onAsk={() => {
                      setNotice(undefined);
                      setForgetting({ fingerprint: s.fingerprint, step: 'confirm' });
                    }}
                    onForget={() => forget(s)}
                    onKeep={() => setForgetting(undefined)}
                  />
                ))}
              </ul>
            )}
          </>
        )}
      </div>
    </section>
  );
}

interface SignerRowProps {
  signer: TrustedSigner;
  forgetting: Forgetting;
  onAsk: () => void;
  onForget: () => void;
  onKeep: () => void;
}

function SignerRow({ signer, forgetting, onAsk, onForget, onKeep }: SignerRowProps) {
  const busy = forgetting?.step === 'busy';
  // The list ends the screen, above the sticky save bar: an opened
  // confirmation scrolls up into sight (its scroll margin clears the bar).
  const box = useRef<HTMLDivElement>(null);
  const asking = forgetting !== undefined;
  useEffect(() => {
    if (asking) box.current?.scrollIntoView?.({ block: 'nearest' });
  }, [asking]);
  return (
    <li className="signer" aria-label={signer.formatted}>
      <div className="signer-line">
        <div className="signer-text">
          <code className="mono fingerprint">{signer.formatted}</code>
          <span className={signer.note ? 'muted small' : 'muted small signer-no-note'}>{signer.note || 'No note'}</span>
        </div>
        {!forgetting && (
          <button type="button" className="button danger small" onClick={onAsk}>
            Stop trusting…
          </button>
        )}
      </div>
      {forgetting && (
        <div className="confirm-box" role="group" aria-label="Confirm stop trusting" ref={box}>
          <p className="small">
            Stop trusting this signer? Its bundles will ask again before they import. What was imported from it stays; you can trust it
            again from the import dialog.
          </p>
          {forgetting.step === 'failed' && (
            <p className="inline-error small" role="alert">
              {sentence(forgetting.message)} It is still trusted; try again.
            </p>
          )}
          <div className="actions">
            <button type="button" className="button danger" disabled={busy} onClick={onForget}>
              {busy ? 'Stopping…' : 'Stop trusting'}
            </button>
            <button type="button" className="button" disabled={busy} onClick={onKeep}>
              Keep trusting
            </button>
          </div>
        </div>
      )}
    </li>
  );
}
