/**
 * BridgeError is how every failed backend call reaches the screens. Its
 * message is the sentence the Go side returned, ready to show as is.
 */
export class BridgeError extends Error {
  override readonly name = 'BridgeError';

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** The sentence shown when a page has no way to reach the backend. */
export const UNREACHABLE = "ducklm's backend is not reachable from this page";

/** The sentence shown on a page `ducklm serve` served, opened without its token. */
export const NO_TOKEN =
  'This page was opened without its token. Open the address `ducklm serve` printed when it started (it ends in ?token=…); if that is lost, stop it and run `ducklm serve` again for a new one.';

const NO_MESSAGE = "ducklm's backend reported an error without saying why";

/**
 * toBridgeError turns whatever a transport rejected with into a BridgeError.
 * Wails v2 rejects a bound call with the Go error's text as a plain string;
 * a JavaScript failure on the way arrives as an Error.
 */
export function toBridgeError(reason: unknown): BridgeError {
  if (reason instanceof BridgeError) return reason;
  const message = messageOf(reason).trim();
  return new BridgeError(message === '' ? NO_MESSAGE : message, { cause: reason });
}

function messageOf(reason: unknown): string {
  if (typeof reason === 'string') return reason;
  if (reason instanceof Error) return reason.message;
  if (reason !== null && typeof reason === 'object' && 'message' in reason) {
    const m = (reason as { message: unknown }).message;
    if (typeof m === 'string') return m;
  }
  if (reason === undefined || reason === null) return '';
  try {
    return JSON.stringify(reason) ?? '';
  } catch {
    return String(reason);
  }
}

/**
 * call runs a backend call and rejects only with BridgeError, including when
 * the call throws before returning a promise.
 */
export async function call<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (reason) {
    throw toBridgeError(reason);
  }
}

/**
 * missingWorkspace returns the folder a refused task named as its workspace
 * when the backend refused it only because the folder does not exist (Go:
 * runtime.ErrWorkspaceMissing, "the workspace folder DIR does not exist"),
 * so the form can offer to create it; otherwise undefined.
 */
export function missingWorkspace(err: unknown): string | undefined {
  const m = /^the workspace folder (.+) does not exist$/.exec(toBridgeError(err).message);
  return m?.[1];
}
