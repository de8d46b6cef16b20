/**
 * An answer the user has begun on an approval card and not sent: the edited
 * arguments, the reason for a denial, the network and host choices. The
 * card keeps it here, by request, so leaving the run (for its timeline, a
 * file) or the card being drawn anew loses none of it; an answer the backend
 * took forgets it.
 */
export interface ApprovalDraft {
  editing: boolean;
  edited: string;
  reason: string;
  network: boolean;
  allowHost: boolean;
}

// Drafts of requests never answered here (answered elsewhere, a run
// cancelled) are dropped oldest first past this many.
const MAX_DRAFTS = 64;

const drafts = new Map<string, ApprovalDraft>();

/** draftOf is the draft of a request, if one was begun. */
export function draftOf(requestId: string): ApprovalDraft | undefined {
  return drafts.get(requestId);
}

/** keepDraft remembers a request's draft (the newest last). */
export function keepDraft(requestId: string, d: ApprovalDraft): void {
  drafts.delete(requestId);
  drafts.set(requestId, d);
  for (const oldest of drafts.keys()) {
    if (drafts.size <= MAX_DRAFTS) break;
    drafts.delete(oldest);
  }
}

/** dropDraft forgets a request's draft (its answer was taken). */
export function dropDraft(requestId: string): void {
  drafts.delete(requestId);
}
