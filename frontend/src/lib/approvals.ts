// Approvals waiting anywhere: the sidebar's badge counts them, and a request
// the window has not seen before raises one desktop notification.
import type { Approval, Confinement, Placement } from '../bridge/types';

/** freshApprovals returns the requests not in seen, in order. */
export function freshApprovals(seen: ReadonlySet<string>, current: readonly Approval[]): Approval[] {
  return current.filter((a) => !seen.has(a.requestId));
}

/** notificationOf is what a desktop notification says about a request. */
export function notificationOf(a: Approval): { title: string; body: string; tag: string } {
  const what = a.title || a.step;
  return {
    title: `ducklm: approval needed (${a.risk} risk)`,
    body: `${what}: ${a.tool}, ${a.why}`,
    tag: a.requestId,
  };
}

/** argsText renders a request's arguments for the card and its editor. */
export function argsText(args: unknown): string {
  if (args === undefined || args === null) return '';
  try {
    return JSON.stringify(args, null, 2);
  } catch {
    return String(args);
  }
}

/** commandOf picks what a person must read first: the shell command or the script. */
export function commandOf(args: unknown): { label: string; text: string } | undefined {
  if (args === null || typeof args !== 'object') return undefined;
  const a = args as Record<string, unknown>;
  if (typeof a.command === 'string') return { label: 'Command', text: a.command };
  if (typeof a.script === 'string') return { label: `Script${typeof a.language === 'string' ? ` (${a.language})` : ''}`, text: a.script };
  if (typeof a.path === 'string') return { label: 'Path', text: a.path };
  return undefined;
}

/**
 * CONFINED says, in words, what holds a step that does not run in the
 * sandbox: the approval card and the finished step say the same.
 */
export const CONFINED: Record<Exclude<Confinement, 'sandbox'>, string> = {
  workspace: "in ducklm itself, inside the run's workspace only",
  hosts: 'in ducklm itself, reaching only the hosts approved for it',
  world: "in a world worker process, under the world's own limits",
  web_worker: "in a web worker process, under the step's time and memory limits, reaching only the hosts approved for it through ducklm",
};

/** inSandboxRow says whether a step's card shows whether bubblewrap holds it: a process it starts, sandboxed or not. */
export function inSandboxRow(where: Confinement): boolean {
  return where === 'sandbox' || where === 'web_worker';
}

/**
 * placementText says where a portable step's work ran: on the team's
 * workers, with how many branches on how many workers, or here and why.
 */
export function placementText(p: Placement): string {
  if (p.workers) {
    const b = p.branches ?? 0;
    return `on the team's workers: ${b} ${b === 1 ? 'branch' : 'branches'} on ${p.workers} ${p.workers === 1 ? 'worker' : 'workers'}`;
  }
  return `here, in this process. ${p.here ?? ''}`.trim();
}
