// A step's approval history from its run's events: what was asked (the
// original arguments), and each answer (approved as asked, approved with
// edited arguments, or denied), who gave it (the window or the CLI), when,
// and why.
import type { LedgerEvent } from '../bridge/types';

/** APPROVAL_EVENTS are the event types the history is read from (backend/runtime/events.go). */
export const APPROVAL_EVENTS = ['step.approval_requested', 'step.approved', 'step.denied'];

/** ApprovalEntry is one request and its answer, if any. */
export interface ApprovalEntry {
  requestId: string;
  askedAt: string;
  /** The arguments the plan gave the step, as asked. */
  args: unknown;
  rule?: string | undefined;
  risk?: string | undefined;
  /**
   * The run that asked, when it is not the run whose history this is: a
   * fork's history starts with its parent's, and the parent's requests and
   * answers are the parent's, not the fork's.
   */
  inheritedFrom?: string | undefined;
  answer?: {
    approved: boolean;
    at: string;
    /** "the window", "the CLI", or what the event says. */
    by: string;
    /** The arguments the user approved instead, when edited. */
    editedArgs?: unknown;
    reason?: string | undefined;
    network: boolean;
  };
}

/** byWhom names who answered, from an answer event's "by". */
export function byWhom(by: unknown): string {
  if (by === 'ui') return 'the window';
  if (by === 'cli') return 'the CLI';
  return typeof by === 'string' && by !== '' ? by : 'unknown';
}

/**
 * approvalHistory folds a run's approval events into one entry per request
 * of step, in order; given runId, a request another run's stream holds (a
 * fork's inherited history) is marked inheritedFrom that run.
 */
export function approvalHistory(events: readonly LedgerEvent[], step: string, runId?: string): ApprovalEntry[] {
  const out: ApprovalEntry[] = [];
  const byId = new Map<string, ApprovalEntry>();
  for (const e of events) {
    const p = (e.payload ?? {}) as Record<string, unknown>;
    if (p.step !== step || typeof p.requestId !== 'string') continue;
    if (e.type === 'step.approval_requested') {
      const entry: ApprovalEntry = {
        requestId: p.requestId,
        askedAt: e.recordedAt,
        args: p.args,
        rule: typeof p.rule === 'string' ? p.rule : undefined,
        risk: typeof p.risk === 'string' ? p.risk : undefined,
        ...(runId !== undefined && e.stream !== runId ? { inheritedFrom: e.stream } : {}),
      };
      byId.set(p.requestId, entry);
      out.push(entry);
    } else if (e.type === 'step.approved' || e.type === 'step.denied') {
      const entry = byId.get(p.requestId);
      if (!entry || entry.answer) continue; // a retried answer is the same answer
      entry.answer = {
        approved: e.type === 'step.approved',
        at: e.recordedAt,
        by: byWhom(p.by),
        reason: typeof p.reason === 'string' && p.reason !== '' ? p.reason : undefined,
        network: p.network === true,
        ...(p.args !== undefined && p.args !== null ? { editedArgs: p.args } : {}),
      };
    }
  }
  return out;
}
