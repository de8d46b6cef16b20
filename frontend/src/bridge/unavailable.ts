// What a page gets when no transport can reach ducklm's backend: every call
// fails with one clear sentence, and nothing is invented.
import { BridgeError, UNREACHABLE } from './errors';
import type { DucklmApi } from './types';

/** createUnavailableApi returns a DucklmApi whose calls all reject. */
export function createUnavailableApi(): DucklmApi {
  return {
    overview: () => Promise.reject(new BridgeError(UNREACHABLE)),
    checks: () => Promise.reject(new BridgeError(UNREACHABLE)),
    onLedgerEvents: () => () => {},
  };
}
