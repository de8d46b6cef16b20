// The bridge is the only code that knows how the window reaches ducklm's
// backend. Screens import `api` (or receive a DucklmApi) and never the
// generated bindings. A transport only implements Channel; the typed
// DucklmApi is built once over whichever channel is available.
import { createApi } from './api';
import type { Channel } from './channel';
import { createUnavailableChannel } from './unavailable';
import { NO_TOKEN } from './errors';
import { httpAvailable, httpChannelFromLocation, servedWithoutToken } from './http';
import * as wails from './wails';
import type { DucklmApi } from './types';

export { BridgeError, NO_TOKEN, UNREACHABLE, missingWorkspace, toBridgeError } from './errors';
export { copyText } from './clipboard';
export { createApi } from './api';
export type { Channel } from './channel';
export { EVENT_LEDGER, EVENT_PROGRESS, EVENT_TOKENS } from './channel';
export type * from './types';
export { LEDGER_EVENTS } from './types';

/** ChannelFactory is one way to reach the backend; the first available one wins. */
export interface ChannelFactory {
  name: string;
  available(win: unknown): boolean;
  create(win: unknown): Channel;
}

/** channels in order of preference. A new transport is one file plus one line here. */
export const channels: readonly ChannelFactory[] = [
  { name: 'wails', available: wails.available, create: () => wails.createWailsChannel() },
  { name: 'http', available: httpAvailable, create: (win) => httpChannelFromLocation(win) },
  // A served page without its token: every call says how to open it with one.
  { name: 'no-token', available: servedWithoutToken, create: () => createUnavailableChannel(NO_TOKEN) },
];

/** selectChannel picks the first channel available in win, or one that explains why nothing works. */
export function selectChannel(win: unknown = globalThis, from: readonly ChannelFactory[] = channels): Channel {
  const f = from.find((candidate) => candidate.available(win));
  return f ? f.create(win) : createUnavailableChannel();
}

/** selectApi builds the DucklmApi over the first available channel. */
export function selectApi(win: unknown = globalThis, from: readonly ChannelFactory[] = channels): DucklmApi {
  return createApi(selectChannel(win, from));
}

let chosen: DucklmApi | undefined;
function current(): DucklmApi {
  chosen ??= selectApi();
  return chosen;
}

/**
 * api is the backend as seen from this page. The channel is chosen once, on
 * first use rather than at import, so the result never depends on whether the
 * window's injected scripts ran before this module was evaluated.
 */
export const api: DucklmApi = new Proxy({} as DucklmApi, {
  get(_target, prop) {
    const value = (current() as unknown as Record<PropertyKey, unknown>)[prop];
    return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(current()) : value;
  },
});
