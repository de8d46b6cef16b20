// The Workers screen's pure parts: what a worker's state says to a person,
// and which workers can take jobs now.
import type { Worker, WorkerState, WorkersView } from '../bridge';

/** POLL_MS is how often the screen asks again while it is open. */
export const POLL_MS = 2000;

/** STATES says each state in words, and whether the worker is alive in it. */
export const STATES: Record<WorkerState, { label: string; alive: boolean; hint: string }> = {
  working: { label: 'Working', alive: true, hint: 'alive, running jobs' },
  idle: { label: 'Idle', alive: true, hint: 'alive, waiting for jobs' },
  stopped: { label: 'Stopped', alive: false, hint: 'left the queue cleanly' },
  lost: { label: 'Lost', alive: false, hint: 'no heartbeat: killed, or its machine or network is gone' },
};

/** alive lists the workers that can take jobs now. */
export function alive(v: WorkersView | undefined): Worker[] {
  return v ? v.workers.filter((w) => STATES[w.state]?.alive) : [];
}

/** freeSlots counts the slots of alive workers not running a job. */
export function freeSlots(workers: readonly Worker[]): number {
  return workers.reduce((n, w) => n + Math.max(0, w.slots - w.jobs.length), 0);
}

/** summary is the one line above the list: how many are alive, and their slots. */
export function summary(v: WorkersView): string {
  const live = alive(v);
  const slots = live.reduce((n, w) => n + w.slots, 0);
  const busy = live.reduce((n, w) => n + w.jobs.length, 0);
  if (live.length === 0) return v.workers.length === 0 ? 'No worker has joined yet.' : 'No worker is alive now.';
  return `${live.length} ${live.length === 1 ? 'worker' : 'workers'} alive: ${busy} of ${slots} ${slots === 1 ? 'slot' : 'slots'} busy.`;
}

/** startCommand is what to run on a machine to add a worker. */
export const startCommand = 'DUCKLM_DATABASE_URL=postgres://… ducklm worker --slots 2';
