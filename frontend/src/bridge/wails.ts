// The Wails transport: the desktop window talks to Go through the generated
// bindings and the Wails runtime's events.
import * as App from '../../wailsjs/go/app/App';
import { EventsOn } from '../../wailsjs/runtime/runtime';
import { call } from './errors';
import type { Check, DucklmApi, LedgerEvent, Overview } from './types';
import { LEDGER_EVENTS } from './types';

/** available reports whether this page runs inside a Wails window. */
export function available(win: unknown = globalThis): boolean {
  const w = win as { go?: { app?: { App?: unknown } }; runtime?: unknown };
  return typeof w.go?.app?.App === 'object' && w.go.app.App !== null && typeof w.runtime === 'object';
}

/** createWailsApi returns the DucklmApi backed by the Wails bindings. */
export function createWailsApi(): DucklmApi {
  return {
    async overview() {
      // The bindings' own types describe the payload as bytes; the value that
      // arrives is the decoded JSON, so the hand-written types are the truth.
      const o = (await call(() => App.Overview())) as unknown as Overview;
      // A Go nil slice arrives as null.
      return { ...o, recentEvents: o.recentEvents ?? [] };
    },
    async checks() {
      const checks = (await call(() => App.Checks())) as unknown as Check[] | null;
      return checks ?? [];
    },
    onLedgerEvents(cb) {
      const off = EventsOn(LEDGER_EVENTS, (events: LedgerEvent[] | null) => {
        if (Array.isArray(events) && events.length > 0) cb(events);
      });
      let done = false;
      return () => {
        if (done) return;
        done = true;
        off();
      };
    },
  };
}
