// A Channel is the smallest thing a transport must provide: call a method of
// the Go API facade (backend/api) by name, and listen to a window event. The
// typed DucklmApi is built once on top of any channel, so the desktop window
// (Wails bindings and events) and the browser (`ducklm serve`: HTTP + SSE)
// share every line above this interface.
//
// The HTTP contract of `ducklm serve` (backend/httpapi):
//   POST /api/call/{Method}   body: JSON array of the method's arguments
//                             header: X-Ducklm-Token: <token from the page URL>
//                             200 → JSON result (null for methods without one)
//                             4xx/5xx → {"error": "<sentence for a person>"}
//   GET  /api/events?token=T  text/event-stream; `event: <name>` + `data: <JSON>`
//                             for each window event (ledger:events, run:tokens)

/** Unsubscribe stops a subscription; calling it twice is harmless. */
export type Unsubscribe = () => void;

export interface Channel {
  /** A short name for diagnostics ("wails", "http"). */
  readonly name: string;
  /** call invokes API method `method` with `args`; it rejects only with BridgeError. */
  call(method: string, args: unknown[]): Promise<unknown>;
  /** on delivers each payload of window event `event` until unsubscribed. */
  on(event: string, cb: (payload: unknown) => void): Unsubscribe;
}

/** The window events the Go side emits. */
export const EVENT_LEDGER = 'ledger:events';
export const EVENT_TOKENS = 'run:tokens';
export const EVENT_PROGRESS = 'work:progress';
export const EVENT_NAVIGATE = 'app:navigate';
