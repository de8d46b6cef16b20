// Small formatting of what the backend sends: Go durations (nanoseconds),
// byte counts, run durations and status words.
import type { RunStatus, StepState } from '../bridge/types';

const NS_PER_MS = 1_000_000;

const COUNT = new Intl.NumberFormat('en');

/**
 * formatCount writes a count with thousands separators, the same in the
 * desktop window and in a browser ("1,000,003"): the locale is fixed, since
 * WebKitGTK under a C locale groups no digits while Chromium does.
 */
export function formatCount(n: number): string {
  return COUNT.format(n);
}

/** formatDuration renders milliseconds as "41 ms", "3.2 s", "4 min 5 s", "2 h 3 min". */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s < 10 ? s.toFixed(1) : Math.round(s)} s`;
  const m = Math.floor(s / 60);
  if (m < 60) {
    const rest = Math.floor(s - m * 60);
    return rest ? `${m} min ${rest} s` : `${m} min`;
  }
  const h = Math.floor(m / 60);
  const rest = m - h * 60;
  return rest ? `${h} h ${rest} min` : `${h} h`;
}

/** formatNanos renders a Go time.Duration (nanoseconds). */
export function formatNanos(ns: number): string {
  return formatDuration(ns / NS_PER_MS);
}

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];

/** formatBytes renders 1048576 as "1 MiB". */
export function formatBytes(n: number): string {
  if (!Number.isFinite(n) || n < 0) return '—';
  let v = n;
  let u = 0;
  while (v >= 1024 && u < UNITS.length - 1) {
    v /= 1024;
    u += 1;
  }
  const shown = v >= 10 || Number.isInteger(v) ? Math.round(v) : Number(v.toFixed(1));
  return `${shown} ${UNITS[u]}`;
}

/** runDuration is how long a run has taken: to now while it moves, to its last update once it ended. */
export function runDuration(createdAt: string, updatedAt: string, status: RunStatus, now: number): number {
  const start = Date.parse(createdAt);
  const end = isTerminal(status) || status === 'paused' || status === 'awaiting_approval' ? Date.parse(updatedAt) : now;
  if (Number.isNaN(start) || Number.isNaN(end)) return Number.NaN;
  return Math.max(0, end - start);
}

/**
 * waitingFor is how long a paused run or one waiting for an approval has
 * waited, from its last update to now; undefined for any other run. Its
 * duration stops while it waits, so the window says how long it has waited.
 */
export function waitingFor(updatedAt: string, status: RunStatus, now: number): number | undefined {
  if (status !== 'paused' && status !== 'awaiting_approval') return undefined;
  const since = Date.parse(updatedAt);
  return Number.isNaN(since) ? undefined : Math.max(0, now - since);
}

/** isTerminal reports whether a run has ended for good. */
export function isTerminal(s: RunStatus): boolean {
  return s === 'completed' || s === 'failed' || s === 'terminated';
}

const RUN_LABEL: Record<RunStatus, string> = {
  pending: 'pending',
  running: 'running',
  paused: 'paused',
  awaiting_approval: 'awaiting approval',
  completed: 'completed',
  failed: 'failed',
  terminated: 'cancelled',
};

/** countOf counts a noun in English: "1 fork", "2 forks", "5,000 worlds". */
export function countOf(n: number, noun: string, plural = `${noun}s`): string {
  return `${n.toLocaleString('en')} ${n === 1 ? noun : plural}`;
}

/** runStatusLabel is the word shown for a run status. */
export function runStatusLabel(s: string): string {
  return RUN_LABEL[s as RunStatus] ?? s.replace(/_/g, ' ');
}

/** WorldRunState is what a world run's badge shows: a key for its colour, its word and what the word means. */
export type WorldRunState = { key: string; label: string; title?: string };

/**
 * worldRunState is the truthful state of a world run. A simulated run stays
 * "running" in the ledger while it is open, stepped or not; it is running
 * only while a batch of steps is being computed (stepping: the backend's
 * flag, or the window's own batch), otherwise idle, waiting for its next
 * action. A task world's run keeps its status: the runtime drives it.
 */
export function worldRunState(run: { status: string; worldLocalTime?: number; stepping?: boolean | undefined }, domain: string): WorldRunState {
  if (domain !== 'simulated' || run.status !== 'running') return { key: run.status, label: runStatusLabel(run.status) };
  const at = run.worldLocalTime === undefined ? '' : ` at t=${run.worldLocalTime}`;
  if (run.stepping) return { key: 'running', label: 'running', title: `Computing steps${at}` };
  return { key: 'idle', label: 'idle', title: `Idle${at}: open and waiting for its next steps; none are being computed` };
}

const STEP_LABEL: Record<StepState, string> = {
  pending: 'pending',
  running: 'running',
  awaiting_approval: 'awaiting approval',
  done: 'done',
  failed: 'failed',
  skipped: 'skipped',
  in_doubt: 'in doubt',
};

/** stepStateLabel is the word shown for a step state. */
export function stepStateLabel(s: string): string {
  return STEP_LABEL[s as StepState] ?? s.replace(/_/g, ' ');
}

/** lineOf finds "line N" in an error sentence (the Starlark errors say "world program line 12: …"). */
export function lineOf(message: string): number | undefined {
  const m = /\bline (\d+)\b/.exec(message);
  if (!m) return undefined;
  const n = Number(m[1]);
  return n > 0 ? n : undefined;
}

/** sentence ends a message (often a backend's) with a full stop, so another sentence can follow it. */
export function sentence(message: string): string {
  const m = message.trim();
  return m === '' || /[.!?…]$/.test(m) ? m : `${m}.`;
}
