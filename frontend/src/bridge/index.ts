// The bridge is the only code that knows how the window reaches ducklm's
// backend. Screens import `api` (or receive a DucklmApi) and never the
// generated bindings.
import { createUnavailableApi } from './unavailable';
import * as wails from './wails';
import type { DucklmApi } from './types';

export { BridgeError, UNREACHABLE, toBridgeError } from './errors';
export { copyText } from './clipboard';
export type { Check, CheckStatus, Counts, DucklmApi, LedgerEvent, Overview, Reality, Unsubscribe } from './types';
export { LEDGER_EVENTS } from './types';

/** Transport is one way to reach the backend; the first available one wins. */
export interface Transport {
  name: string;
  available(win: unknown): boolean;
  create(): DucklmApi;
}

/** Transports in order of preference. A new transport is one file plus one line here. */
export const transports: readonly Transport[] = [
  { name: 'wails', available: wails.available, create: wails.createWailsApi },
];

/** selectApi picks the first transport available in win, or one that explains why nothing works. */
export function selectApi(win: unknown = globalThis, from: readonly Transport[] = transports): DucklmApi {
  const t = from.find((candidate) => candidate.available(win));
  return t ? t.create() : createUnavailableApi();
}

let chosen: DucklmApi | undefined;
function current(): DucklmApi {
  chosen ??= selectApi();
  return chosen;
}

/**
 * api is the backend as seen from this page. The transport is chosen once,
 * on first use rather than at import, so the result never depends on whether
 * the window's injected scripts ran before this module was evaluated.
 */
export const api: DucklmApi = {
  overview: () => current().overview(),
  checks: () => current().checks(),
  onLedgerEvents: (cb) => current().onLedgerEvents(cb),
};
