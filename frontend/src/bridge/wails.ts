// The Wails channel: the desktop window reaches Go through the generated
// bindings (one function per API method, called by name) and the Wails
// runtime's events. It knows nothing of what the methods mean.
import * as App from '../../wailsjs/go/app/App';
import { EventsOn } from '../../wailsjs/runtime/runtime';
import { type Channel } from './channel';
import { BridgeError, call } from './errors';

/** available reports whether this page runs inside a Wails window. */
export function available(win: unknown = globalThis): boolean {
  const w = win as { go?: { app?: { App?: unknown } }; runtime?: unknown };
  return typeof w.go?.app?.App === 'object' && w.go.app.App !== null && typeof w.runtime === 'object';
}

type Binding = (...args: unknown[]) => Promise<unknown>;
const bindings = App as unknown as Record<string, Binding | undefined>;

/** createWailsChannel returns the Channel backed by the Wails bindings. */
export function createWailsChannel(): Channel {
  return {
    name: 'wails',
    call(method, args) {
      const fn = Object.hasOwn(bindings, method) ? bindings[method] : undefined;
      if (typeof fn !== 'function') {
        return Promise.reject(new BridgeError(`This ducklm window has no method ${method}; rebuild the app`));
      }
      return call(() => fn(...args));
    },
    on(event, cb) {
      const off = EventsOn(event, (payload: unknown) => cb(payload));
      let done = false;
      return () => {
        if (done) return;
        done = true;
        off();
      };
    },
  };
}
