// The shapes ducklm's Go side sends, written by hand so they say exactly what
// the JSON holds. The generated wailsjs/go/models.ts is not used: it types the
// payload as number[] (Go's json.RawMessage) while the window receives the
// decoded JSON value.

/** Reality says what kind of fact an event records. */
export type Reality = 'external_real' | 'world_local';

/** LedgerEvent is one committed event envelope (Go: backend.Event). */
export interface LedgerEvent {
  id: string;
  /** The world run the event belongs to. */
  stream: string;
  /** Monotonic, gap-free position within the stream. */
  seq: number;
  /** Global position across all streams, assigned at commit. */
  pos: number;
  type: string;
  schemaVersion: number;
  /** An arbitrary JSON value. */
  payload: unknown;
  reality: Reality;
  causationId?: string;
  correlationId?: string;
  /** RFC 3339 wall time with microseconds. */
  recordedAt: string;
  parentTime: number;
  deliberationIndex: number;
  worldLocalTime: number;
}

/** Counts of what the ledger and the registries hold. */
export interface Counts {
  worlds: number;
  runs: number;
  streams: number;
  events: number;
}

/** Overview is what the first screen shows (Go: service.Overview). */
export interface Overview {
  version: string;
  dataDir: string;
  databasePath: string;
  schemaVersion: number;
  latestSchemaVersion: number;
  counts: Counts;
  /** Newest first. */
  recentEvents: LedgerEvent[];
}

/** CheckStatus: ok, warn (ducklm works, with less) or fail (it cannot work until fixed). */
export type CheckStatus = 'ok' | 'warn' | 'fail';

/** Check is one result of the doctor's machine checks (Go: doctor.Check). */
export interface Check {
  name: string;
  status: CheckStatus;
  detail: string;
  fix?: string;
}

/** Unsubscribe stops a subscription; calling it twice is harmless. */
export type Unsubscribe = () => void;

/**
 * DucklmApi is everything the screens may ask of ducklm's backend. Each
 * transport (the Wails window today, HTTP + SSE for `ducklm serve` later)
 * implements it in one file; calls reject with a BridgeError.
 */
export interface DucklmApi {
  overview(): Promise<Overview>;
  checks(): Promise<Check[]>;
  /** Receives batches of committed events, in commit order. */
  onLedgerEvents(cb: (events: LedgerEvent[]) => void): Unsubscribe;
}

/** The window event that carries LedgerEvent[] batches. */
export const LEDGER_EVENTS = 'ledger:events';
