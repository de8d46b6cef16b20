import type { BundleReport } from '../bridge';
import { formatBytes, sentence } from '../lib/format';
import { shortId } from '../lib/ids';
import { href } from '../lib/route';
import { formatAbsolute } from '../lib/time';
import { FailIcon, OkIcon, WarnIcon } from '../ui/icons';
import { countsText, formatFingerprint, worldRoute } from './bundle';
import './bundles.css';

type Mark = 'ok' | 'warn' | 'fail' | 'skip';

interface Step {
  name: string;
  mark: Mark;
  detail: string;
}

/** steps turns a report into its checklist, in the order the checks run. */
export function reportSteps(r: BundleReport): Step[] {
  const c = r.checks;
  // The first step that did not pass is where the problem was found; the
  // ones after it were never tried.
  const failed = !r.ok ? (['manifest', 'signature', 'entries', 'references'] as const).find((k) => !c[k]) : undefined;
  const mark = (k: keyof typeof c): Mark => (c[k] ? 'ok' : k === failed ? 'fail' : 'skip');
  const notTried = 'Not checked: an earlier check failed.';
  const problem = (fallback: string) => capitalSentence(r.problem ?? fallback);
  const steps: Step[] = [
    {
      name: 'Manifest',
      mark: mark('manifest'),
      detail: c.manifest
        ? `Format version ${r.formatVersion}, written by ducklm ${r.appVersion || '(unknown version)'}${r.createdAt ? ` on ${formatAbsolute(r.createdAt).replace(/\.\d+/, '')}` : ''}.`
        : failed === 'manifest'
          ? problem('The manifest could not be read.')
          : notTried,
    },
  ];
  if (c.signature && r.signed) {
    steps.push({ name: 'Signature', mark: 'ok', detail: 'The signature matches the manifest: nothing was changed after it was signed.' });
    steps.push({
      name: 'Signer',
      mark: r.trusted ? 'ok' : 'warn',
      detail: r.trusted
        ? `Trusted here: ${r.trust}.`
        : 'Not a key this installation trusts. Anyone can make a key and sign a bundle; trust it only if you know where the file came from.',
    });
  } else if (c.signature) {
    steps.push({ name: 'Signature', mark: 'warn', detail: 'The bundle is unsigned: nothing vouches for where it came from.' });
  } else {
    steps.push({ name: 'Signature', mark: mark('signature'), detail: failed === 'signature' ? problem('The signature does not match.') : notTried });
  }
  steps.push({
    name: 'Digests',
    mark: mark('entries'),
    detail: c.entries
      ? `All ${r.entries} entries have the size and sha256 digest the manifest lists, and every record and event is well formed.`
      : failed === 'entries'
        ? problem('An entry does not match its digest.')
        : notTried,
  });
  steps.push({
    name: 'References',
    mark: mark('references'),
    detail: c.references
      ? 'Every world, run, fork, checkpoint and blob it names is in the bundle or already here, and the lineage stays acyclic.'
      : failed === 'references'
        ? problem('A reference does not resolve.')
        : notTried,
  });
  return steps;
}

/** capitalSentence starts a backend sentence with a capital and ends it with a full stop. */
function capitalSentence(s: string): string {
  const t = sentence(s);
  return t.charAt(0).toUpperCase() + t.slice(1);
}

function failedName(r: BundleReport): string {
  return reportSteps(r).find((s) => s.mark === 'fail')?.name.toLowerCase() ?? 'verification';
}

const ICONS = { ok: OkIcon, warn: WarnIcon, fail: FailIcon } as const;
const LABELS: Record<Mark, string> = { ok: 'Passed', warn: 'Needs your judgement', fail: 'Failed', skip: 'Not checked' };

interface BundleReportViewProps {
  report: BundleReport;
  /** Link the worlds the bundle holds (once they are here). */
  links?: boolean;
  /** Worlds and runs the import added, to mark them as new. */
  added?: string[];
  /** Show the file, what it holds and its worlds (off where the screen says them already). */
  summary?: boolean;
}

/** BundleReportView shows what verifying a bundle found: each check, the signer, and what it holds. */
export function BundleReportView({ report: r, links = false, added = [], summary = true }: BundleReportViewProps) {
  const steps = reportSteps(r);
  return (
    <section className="bundle-report" aria-label="Verification report">
      {/* Intact is not enough to import: an untrusted signer is a choice to make, not a green light. */}
      <p className={r.ok ? (r.trusted ? 'status-note ok' : 'inline-warn') : 'problems bundle-verdict'} role="status">
        {!r.ok
          ? `This bundle cannot be imported: it failed the ${failedName(r)} check.`
          : r.trusted
            ? 'This bundle checks out.'
            : `This bundle is intact, but ${r.signed ? 'its signer is not one this installation trusts' : 'it is unsigned'}: importing it is your choice.`}
      </p>
      <ul className="check-list bundle-checks">
        {steps.map((s) => {
          const Icon = s.mark === 'skip' ? undefined : ICONS[s.mark];
          return (
            <li key={s.name} className={`check check-${s.mark}`} data-check={s.name}>
              {Icon ? <Icon className="check-icon" role="img" aria-label={LABELS[s.mark]} aria-hidden={false} /> : <span className="check-icon bundle-skip" aria-label={LABELS.skip} role="img" />}
              <div className="min0">
                <div className="check-name">{s.name}</div>
                <div className="check-detail">{s.detail}</div>
                {s.name === 'Signer' && r.signer && (
                  <div className="fingerprint mono" title="The signer's key fingerprint (sha256 of its public key)">
                    {formatFingerprint(r.signer)}
                  </div>
                )}
              </div>
            </li>
          );
        })}
      </ul>
      {summary && (
        <dl className="facts bundle-facts">
          <div className="fact">
            <dt>File</dt>
            <dd>
              <span className="path" title={r.file}>
                {r.file}
              </span>
              <span className="muted small">{formatBytes(r.bytes)}</span>
            </dd>
          </div>
          {r.roots.length > 0 && (
            <div className="fact">
              <dt>Exported for</dt>
              <dd className="mono">
                {r.roots.map(shortId).join(', ')}
                {(r.scope.ancestry || r.scope.descendants) && (
                  <span className="muted small">
                    with {[r.scope.ancestry && 'ancestry', r.scope.descendants && 'descendants'].filter(Boolean).join(' and ')}
                  </span>
                )}
              </dd>
            </div>
          )}
          {r.ok && (
            <div className="fact">
              <dt>Holds</dt>
              <dd>{countsText(r.counts)}</dd>
            </div>
          )}
        </dl>
      )}
      {summary && r.worlds.length > 0 && (
        <ul className="bundle-worlds">
          {r.worlds.map((w) => {
            const events = w.runs.reduce((n, run) => n + run.events, 0);
            const isNew = added.includes(w.id);
            return (
              <li key={w.id}>
                <span className={`badge reality-${w.domain === 'real' ? 'external_real' : 'world_local'}`}>{w.domain === 'real' ? 'task' : 'simulated'}</span>
                <span className="bundle-world-main min0">
                  {links ? (
                    <a href={href(worldRoute(w))} className="bundle-world-name" title={`Open ${w.name || w.id}`}>
                      {w.name || shortId(w.id)}
                    </a>
                  ) : (
                    <span className="bundle-world-name">{w.name || shortId(w.id)}</span>
                  )}
                  <span className="muted small block">
                    <span className="mono" title={w.id}>
                      {shortId(w.id)}
                    </span>
                    {' · '}
                    {w.runs.length} run{w.runs.length === 1 ? '' : 's'}, {events} event{events === 1 ? '' : 's'}
                    {w.parentWorldId ? ` · forked from ${shortId(w.parentWorldId)}` : ''}
                  </span>
                </span>
                {links && <span className={isNew ? 'badge bundle-new' : 'badge bundle-here'}>{isNew ? 'new here' : 'was here already'}</span>}
                {links && (
                  <a className="button small" href={href({ screen: 'lineage', select: w.id })}>
                    Lineage
                  </a>
                )}
              </li>
            );
          })}
        </ul>
      )}
    </section>
  );
}
