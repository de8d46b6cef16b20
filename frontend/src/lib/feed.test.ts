import { describe, expect, it } from 'vitest';
import { event } from '../test/fixtures';
import { eventKey, mergeEvents, startFeed } from './feed';

const A = 'run_0190f0e3c2a47b3d9e8f0011223300aa';
const B = 'wld_0190f0e3c2a47b3d9e8f0011223300bb';

describe('startFeed', () => {
  it('orders newest first, dedupes and keeps the limit', () => {
    const feed = startFeed(
      [
        event({ stream: A, seq: 1, pos: 1 }),
        event({ stream: A, seq: 3, pos: 3 }),
        event({ stream: A, seq: 3, pos: 3 }),
        event({ stream: B, seq: 1, pos: 2 }),
      ],
      3,
      2,
    );
    expect(feed.events.map((e) => e.pos)).toEqual([3, 2]);
    expect(feed.total).toBe(3);
    expect(feed.live.size).toBe(0);
  });
});

describe('mergeEvents', () => {
  const base = () => startFeed([event({ stream: A, seq: 2, pos: 2 }), event({ stream: A, seq: 1, pos: 1 })], 2);

  it('puts new events on top and counts them', () => {
    const feed = mergeEvents(base(), [event({ stream: B, seq: 1, pos: 3 }), event({ stream: A, seq: 3, pos: 4 })]);
    expect(feed.events.map((e) => e.pos)).toEqual([4, 3, 2, 1]);
    expect(feed.total).toBe(4);
    expect([...feed.live]).toEqual(expect.arrayContaining([eventKey({ stream: B, seq: 1 }), eventKey({ stream: A, seq: 3 })]));
    expect(feed.live.has(eventKey({ stream: A, seq: 2 }))).toBe(false);
  });

  it('ignores redelivered events, within and across batches', () => {
    const once = mergeEvents(base(), [event({ stream: A, seq: 3, pos: 3 }), event({ stream: A, seq: 3, pos: 3 })]);
    expect(once.total).toBe(3);
    expect(once.events).toHaveLength(3);
    const twice = mergeEvents(once, [event({ stream: A, seq: 3, pos: 3 })]);
    expect(twice).toBe(once);
  });

  it('does not count again events the overview already counted', () => {
    // Subscribed before the overview loaded: the first batch overlaps it.
    const feed = mergeEvents(base(), [event({ stream: A, seq: 2, pos: 2 }), event({ stream: A, seq: 3, pos: 3 })]);
    expect(feed.total).toBe(3);
    expect(feed.events.map((e) => e.pos)).toEqual([3, 2, 1]);
  });

  it('counts an event delivered again after it left the list only once', () => {
    let feed = startFeed([], 0, 2);
    feed = mergeEvents(feed, [1, 2, 3].map((n) => event({ stream: A, seq: n, pos: n })));
    expect(feed.events.map((e) => e.pos)).toEqual([3, 2]);
    expect(feed.total).toBe(3);
    feed = mergeEvents(feed, [event({ stream: A, seq: 1, pos: 1 })]);
    expect(feed.total).toBe(3);
    expect(feed.events.map((e) => e.pos)).toEqual([3, 2]);
  });

  it('keeps the newest 50 by default', () => {
    let feed = startFeed([], 0);
    for (let n = 1; n <= 120; n += 10) {
      const batch = Array.from({ length: 10 }, (_, i) => event({ stream: A, seq: n + i, pos: n + i }));
      feed = mergeEvents(feed, batch);
    }
    expect(feed.events).toHaveLength(50);
    expect(feed.events[0]?.seq).toBe(120);
    expect(feed.events[49]?.seq).toBe(71);
    expect(feed.total).toBe(120);
    expect(feed.live.size).toBe(50);
  });

  it('returns the feed unchanged for an empty batch', () => {
    const feed = base();
    expect(mergeEvents(feed, [])).toBe(feed);
  });
});
