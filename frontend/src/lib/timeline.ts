// The timeline's row maths: which events a filter keeps, where each event
// sits on the chosen clock's axis, which lane (stream) it belongs to, and
// which row a seq lands on. Pure, so the virtualized list only draws.
import type { LedgerEvent, Reality } from '../bridge/types';

/** Clock is what the swimlane's horizontal axis measures. */
export type Clock = 'recorded' | 'parentTime' | 'deliberationIndex' | 'worldLocalTime';

/** CLOCKS names each clock in words; the ledger's field is in the hint. */
export const CLOCKS: readonly { id: Clock; label: string; hint: string }[] = [
  { id: 'recorded', label: 'Recorded time', hint: 'When the ledger recorded the event (wall clock)' },
  { id: 'parentTime', label: 'Time in the parent', hint: "The parent world's time at the fork (parent_time)" },
  { id: 'deliberationIndex', label: 'Deliberation round', hint: 'Which deliberation round made the event (deliberation_index)' },
  { id: 'worldLocalTime', label: 'World time', hint: "The world's own step count (world_local_time)" },
];

/** TimelineRow is one event of a run's full history. */
export interface TimelineRow {
  /** Position in the full history (0 = oldest). */
  index: number;
  event: LedgerEvent;
  /** The event belongs to an ancestor's stream: the inherited prefix. */
  inherited: boolean;
  /** Set on checkpoint events: the checkpoint a fork can start from. */
  checkpointId?: string;
}

/**
 * checkpointOf returns the checkpoint id an event records, if it records one: a checkpoint event's, or a task step's
 * result's (step.finished ends the checkpoint recorded with it).
 */
export function checkpointOf(e: LedgerEvent): string | undefined {
  if (!e.type.endsWith('.checkpoint') && e.type !== 'step.finished') return undefined;
  const p = e.payload as { checkpointId?: unknown } | null;
  return p && typeof p.checkpointId === 'string' ? p.checkpointId : undefined;
}

/** toRows numbers a page of history from offset and marks the inherited prefix. */
export function toRows(events: readonly LedgerEvent[], offset: number, inherited: number): TimelineRow[] {
  return events.map((event, i) => {
    const index = offset + i;
    const row: TimelineRow = { index, event, inherited: index < inherited };
    const cp = checkpointOf(event);
    if (cp) row.checkpointId = cp;
    return row;
  });
}

/** Filter is what the timeline's controls select. */
export interface Filter {
  /** Types to show; empty shows every type. */
  types: ReadonlySet<string>;
  reality: 'all' | Reality;
  text: string;
  regex: boolean;
}

export const NO_FILTER: Filter = { types: new Set(), reality: 'all', text: '', regex: false };

/** Matcher tests a line of text, or says why the search cannot be read. */
export type Matcher = { ok: true; test: (s: string) => boolean } | { ok: false; error: string };

/** compileSearch turns the search box into a matcher: plain text (case-insensitive) or a regular expression. */
export function compileSearch(text: string, regex: boolean): Matcher {
  if (text === '') return { ok: true, test: () => true };
  if (!regex) {
    const needle = text.toLowerCase();
    return { ok: true, test: (s) => s.toLowerCase().includes(needle) };
  }
  try {
    const re = new RegExp(text, 'i');
    return { ok: true, test: (s) => re.test(s) };
  } catch (e) {
    const why = e instanceof Error ? e.message.replace(/^Invalid regular expression: /, '') : String(e);
    return { ok: false, error: `The search is not a valid regular expression (${why}); fix it or turn off regex.` };
  }
}

/** searchText is what a search looks at: the type, the stream, the seq and the payload. */
export function searchText(e: LedgerEvent): string {
  let payload = '';
  try {
    payload = JSON.stringify(e.payload) ?? '';
  } catch {
    payload = '';
  }
  return `${e.type} ${e.stream} #${e.seq} ${payload}`;
}

/** filterRows applies a filter; with an unreadable search it keeps every row and says why. */
export function filterRows(rows: readonly TimelineRow[], f: Filter): { rows: TimelineRow[]; error?: string } {
  const m = compileSearch(f.text, f.regex);
  const test = m.ok ? m.test : () => true;
  const out = rows.filter(
    (r) =>
      (f.types.size === 0 || f.types.has(r.event.type)) &&
      (f.reality === 'all' || r.event.reality === f.reality) &&
      (f.text === '' || test(searchText(r.event))),
  );
  return m.ok ? { rows: out } : { rows: out, error: m.error };
}

/** typesOf lists the event types present, with how many of each, most frequent first. */
export function typesOf(rows: readonly TimelineRow[]): { type: string; count: number }[] {
  const counts = new Map<string, number>();
  for (const r of rows) counts.set(r.event.type, (counts.get(r.event.type) ?? 0) + 1);
  return [...counts].map(([type, count]) => ({ type, count })).sort((a, b) => b.count - a.count || a.type.localeCompare(b.type));
}

/** clockValue reads an event's position on a clock (recorded time in ms since the epoch). */
export function clockValue(e: LedgerEvent, clock: Clock): number {
  switch (clock) {
    case 'recorded': {
      const ms = Date.parse(e.recordedAt);
      return Number.isNaN(ms) ? 0 : ms;
    }
    case 'parentTime':
      return e.parentTime;
    case 'deliberationIndex':
      return e.deliberationIndex;
    case 'worldLocalTime':
      return e.worldLocalTime;
  }
}

export interface Domain {
  min: number;
  max: number;
}

/** clockDomain is the range of a clock over the rows. */
export function clockDomain(rows: readonly TimelineRow[], clock: Clock): Domain {
  let min = Infinity;
  let max = -Infinity;
  for (const r of rows) {
    const v = clockValue(r.event, clock);
    if (v < min) min = v;
    if (v > max) max = v;
  }
  return min === Infinity ? { min: 0, max: 0 } : { min, max };
}

/** xOnAxis places value on an axis width px wide with pad px at each end; a flat domain sits in the middle. */
export function xOnAxis(value: number, d: Domain, width: number, pad = 6): number {
  const span = d.max - d.min;
  if (span <= 0) return width / 2;
  const t = Math.min(1, Math.max(0, (value - d.min) / span));
  return pad + t * (width - 2 * pad);
}

/** Lane is one stream of the history, in order of first appearance (root first). */
export interface Lane {
  stream: string;
  index: number;
  inherited: boolean;
  events: number;
}

/** lanesOf lists the streams of the rows as lanes. */
export function lanesOf(rows: readonly TimelineRow[]): Lane[] {
  const lanes = new Map<string, Lane>();
  for (const r of rows) {
    const l = lanes.get(r.event.stream);
    if (l) l.events += 1;
    else lanes.set(r.event.stream, { stream: r.event.stream, index: lanes.size, inherited: r.inherited, events: 1 });
  }
  return [...lanes.values()];
}

/**
 * rowOfSeq finds the row showing seq: the run's own event first, then any
 * stream's. It returns -1 when no row shows it (absent, or filtered out).
 */
export function rowOfSeq(rows: readonly TimelineRow[], seq: number, ownStream: string): number {
  let other = -1;
  for (let i = 0; i < rows.length; i++) {
    const e = rows[i]!.event;
    if (e.seq !== seq) continue;
    if (e.stream === ownStream) return i;
    if (other < 0) other = i;
  }
  return other;
}

/** mergeLive appends live events of the run's own stream that continue the history. */
export function mergeLive(rows: readonly TimelineRow[], live: readonly LedgerEvent[], ownStream: string, inherited: number): TimelineRow[] {
  let lastSeq = 0;
  for (let i = rows.length - 1; i >= 0; i--) {
    if (rows[i]!.event.stream === ownStream) {
      lastSeq = rows[i]!.event.seq;
      break;
    }
  }
  const fresh = live.filter((e) => e.stream === ownStream && e.seq > lastSeq).sort((a, b) => a.seq - b.seq);
  if (fresh.length === 0) return rows as TimelineRow[];
  const out = [...rows];
  for (const e of fresh) {
    if (e.seq !== lastSeq + 1) break; // a gap: the history must be read again, not guessed
    lastSeq = e.seq;
    out.push(...toRows([e], out.length, inherited));
  }
  return out;
}
