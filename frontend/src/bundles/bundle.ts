// What the bundle dialogs say, as pure functions: scopes and what each
// includes, counts in words, fingerprints in groups, progress in words, and
// where an imported world opens.
import type { BundleCounts, BundleScope, HeldWorld, Progress } from '../bridge/types';
import { formatBytes } from '../lib/format';
import type { Route } from '../lib/route';

/** RootKind is what an export starts from. */
export type RootKind = 'run' | 'world';

/** ScopeOption is one choice of what an export holds. */
export interface ScopeOption {
  id: BundleScope;
  label: string;
  /** What the bundle holds with this choice. */
  includes: string;
  /** Why the choice is not offered for this root, if it is not. */
  unavailable?: string;
}

/**
 * scopeOptions are the three choices for a root: alone, with its ancestry,
 * with its descendants. A forked root cannot travel without the ancestors
 * its history starts in, so for it "alone" is not offered and descendants
 * come with the ancestry; a root that was never forked has no ancestry.
 */
export function scopeOptions(kind: RootKind, forked: boolean): ScopeOption[] {
  const self =
    kind === 'run'
      ? 'this run, its world, every event of its stream, its checkpoints and the blobs they need'
      : 'this world, all its runs with their events, their checkpoints and the blobs they need';
  const ancestry = 'every ancestor world, run, fork and checkpoint its history starts in, so it opens on its own elsewhere';
  const descendants = 'every world forked from it, directly or not, with all their runs';
  return [
    {
      id: 'alone',
      label: kind === 'run' ? 'This run alone' : 'This world alone',
      includes: `${capital(self)}.`,
      ...(forked ? { unavailable: `It comes from a fork: its history starts in its ancestors, which must travel with it.` } : {}),
    },
    {
      id: 'ancestry',
      label: 'With its ancestry',
      includes: `${capital(self)}, and ${ancestry}.`,
      ...(forked ? {} : { unavailable: `It was not forked from anything: it has no ancestry.` }),
    },
    forked
      ? { id: 'all', label: 'With its ancestry and descendants', includes: `${capital(self)}, ${ancestry}, and ${descendants}.` }
      : { id: 'descendants', label: 'With its descendants', includes: `${capital(self)}, and ${descendants}.` },
  ];
}

/** defaultScope is the first scope offered for a root. */
export function defaultScope(forked: boolean): BundleScope {
  return forked ? 'ancestry' : 'alone';
}

function capital(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

/** countsText says what a bundle holds (or an import added) in words. */
export function countsText(c: BundleCounts): string {
  return [
    plural(c.worlds, 'world'),
    plural(c.runs, 'run'),
    plural(c.forks, 'fork'),
    plural(c.checkpoints, 'checkpoint'),
    plural(c.events, 'event'),
    plural(c.blobs, 'blob'),
  ].join(', ');
}

/** formatFingerprint shows a key fingerprint in groups of four hex digits, as the CLI does. */
export function formatFingerprint(fp: string): string {
  return (fp.match(/.{1,4}/g) ?? []).join(' ');
}

const PHASES: Record<string, string> = {
  export: 'Writing the bundle',
  verify: 'Checking every entry',
  write: 'Writing into this installation',
};

/** progressText says where long bundle work is: "Checking every entry: 3 MiB of 12 MiB (25%)". */
export function progressText(p: Progress): string {
  const phase = PHASES[p.phase] ?? p.phase;
  if (p.total <= 0) return `${phase}…`;
  const pct = Math.min(100, Math.floor((p.done / p.total) * 100));
  const amount = p.unit === 'bytes' ? `${formatBytes(p.done)} of ${formatBytes(p.total)}` : `${p.done} of ${p.total} ${p.unit}`;
  return `${phase}: ${amount} (${pct}%)`;
}

/** worldRoute is where an imported world opens: a task run's view, or a simulated world's latest run. */
export function worldRoute(w: HeldWorld): Route {
  const run = w.runs[w.runs.length - 1];
  if (!run) return { screen: 'lineage', select: w.id };
  return w.domain === 'real' ? { screen: 'run', runId: run.id } : { screen: 'world', runId: run.id };
}

let seq = 0;

/** newOp returns an id to follow one piece of work's progress by. */
export function newOp(what: string): string {
  seq += 1;
  return `${what}-${Date.now().toString(36)}-${seq}`;
}
