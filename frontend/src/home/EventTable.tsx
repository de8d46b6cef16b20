import { memo } from 'react';
import type { LedgerEvent } from '../bridge';
import { type EventFeed, eventKey } from '../lib/feed';
import { formatCount } from '../lib/format';
import { shortId } from '../lib/ids';
import { detailPayload, previewPayload } from '../lib/payload';
import { formatAbsolute, formatRelative } from '../lib/time';
import { useRelativeNow } from '../ui/useNow';
import './home.css';

const REALITY = {
  external_real: { label: 'external-real', title: 'A fact that happened on this machine' },
  world_local: { label: 'world-local', title: 'Happened inside a simulated world' },
} as const;


interface EventTableProps {
  feed: EventFeed;
}

/** EventTable lists the newest ledger events, newest first. */
export function EventTable({ feed }: EventTableProps) {
  const now = useRelativeNow(feed.events.map((e) => e.recordedAt));
  const shown = feed.events.length;
  return (
    <section className="panel events" aria-labelledby="events-title">
      <header className="panel-head">
        <h2 id="events-title">Recent events</h2>
        {shown > 0 && (
          <span className="panel-meta">
            newest {formatCount(shown)} of {formatCount(Math.max(feed.total, shown))}, updating live
          </span>
        )}
      </header>
      {shown === 0 ? (
        <p className="empty">No events yet. Events appear here as runs and worlds record them.</p>
      ) : (
        <div className="table-scroll">
          <table className="event-table">
            <colgroup>
              <col className="col-time" />
              <col className="col-stream" />
              <col className="col-seq" />
              <col className="col-type" />
              <col className="col-reality" />
              <col />
            </colgroup>
            <thead>
              <tr>
                <th scope="col">Recorded</th>
                <th scope="col">Stream</th>
                <th scope="col" className="num">
                  Seq
                </th>
                <th scope="col">Type</th>
                <th scope="col">Reality</th>
                <th scope="col">Payload</th>
              </tr>
            </thead>
            <tbody>
              {feed.events.map((e) => {
                const key = eventKey(e);
                return <EventRow key={key} event={e} now={now} live={feed.live.has(key)} />;
              })}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

interface EventRowProps {
  event: LedgerEvent;
  now: number;
  live: boolean;
}

const EventRow = memo(function EventRow({ event: e, now, live }: EventRowProps) {
  const reality = REALITY[e.reality] ?? { label: e.reality, title: '' };
  return (
    <tr className={live ? 'live' : undefined} data-testid="event-row">
      <td>
        <time dateTime={e.recordedAt} title={formatAbsolute(e.recordedAt)}>
          {formatRelative(e.recordedAt, now)}
        </time>
      </td>
      <td className="mono" title={e.stream}>
        {shortId(e.stream)}
      </td>
      <td className="mono num">{e.seq}</td>
      <td className="mono ellipsis" title={e.type}>
        {e.type}
      </td>
      <td>
        <span className={`badge reality-${e.reality}`} title={reality.title}>
          {reality.label}
        </span>
      </td>
      <td className="mono ellipsis payload" title={detailPayload(e.payload)}>
        {previewPayload(e.payload)}
      </td>
    </tr>
  );
});
