// What a page gets when no transport can reach ducklm's backend: every call
// fails with one clear sentence, and nothing is invented.
import type { Channel } from './channel';
import { BridgeError, UNREACHABLE } from './errors';

/** createUnavailableChannel returns a Channel whose calls all reject with why (by default UNREACHABLE). */
export function createUnavailableChannel(why: string = UNREACHABLE): Channel {
  return {
    name: 'unavailable',
    call: () => Promise.reject(new BridgeError(why)),
    on: () => () => {},
  };
}
