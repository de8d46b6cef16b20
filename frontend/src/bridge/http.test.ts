import { describe, expect, it, vi } from 'vitest';
import { EVENT_LEDGER, EVENT_TOKENS } from './channel';
import { BridgeError } from './errors';
import {
  NOT_ANSWERING,
  TOKEN_HEADER,
  TOKEN_STORAGE_KEY,
  createHttpChannel,
  httpAvailable,
  httpChannelFromLocation,
  servedWithoutToken,
} from './http';
import { NO_TOKEN, selectChannel } from './index';

const TOKEN = '0123456789abcdef0123456789abcdef';

function jsonResponse(status: number, body: string): Response {
  return new Response(body, { status, headers: { 'Content-Type': 'application/json' } });
}

/** FakeEventSource records what the channel does with its EventSource. */
class FakeEventSource {
  static instances: FakeEventSource[] = [];
  readonly url: string;
  closed = false;
  private listeners = new Map<string, Set<(e: MessageEvent) => void>>();

  constructor(url: string) {
    this.url = url;
    FakeEventSource.instances.push(this);
  }
  addEventListener(name: string, h: (e: MessageEvent) => void) {
    const set = this.listeners.get(name) ?? new Set();
    set.add(h);
    this.listeners.set(name, set);
  }
  removeEventListener(name: string, h: (e: MessageEvent) => void) {
    this.listeners.get(name)?.delete(h);
  }
  close() {
    this.closed = true;
  }
  /** emit delivers an SSE message as the browser would. */
  emit(name: string, data: string) {
    for (const h of [...(this.listeners.get(name) ?? [])]) h(new MessageEvent(name, { data }));
  }
  listenerCount(name: string) {
    return this.listeners.get(name)?.size ?? 0;
  }
}

function fakeSources() {
  FakeEventSource.instances = [];
  return FakeEventSource as unknown as typeof EventSource;
}

describe('HTTP channel calls', () => {
  it('posts the arguments as a JSON array with the token and resolves the JSON answer', async () => {
    const fetch = vi.fn(async () => jsonResponse(200, '{"dataDir":"/home/me/.local/share/ducklm"}\n'));
    const ch = createHttpChannel('http://127.0.0.1:4321/', TOKEN, { fetch });
    expect(ch.name).toBe('http');
    await expect(ch.call('RunDetail', ['run_1'])).resolves.toEqual({ dataDir: '/home/me/.local/share/ducklm' });
    expect(fetch).toHaveBeenCalledTimes(1);
    const [url, init] = fetch.mock.calls[0] as unknown as [string, RequestInit];
    expect(url).toBe('http://127.0.0.1:4321/api/call/RunDetail');
    expect(init.method).toBe('POST');
    expect((init.headers as Record<string, string>)[TOKEN_HEADER]).toBe(TOKEN);
    expect(init.body).toBe('["run_1"]');
  });

  it('resolves null for a method without a result', async () => {
    const ch = createHttpChannel('', TOKEN, { fetch: async () => jsonResponse(200, 'null\n') });
    await expect(ch.call('CancelRun', ['run_1'])).resolves.toBeNull();
  });

  it('rejects with a BridgeError carrying the server sentence', async () => {
    const sentence = 'there is no run run_9 in this data directory';
    const ch = createHttpChannel('', TOKEN, {
      fetch: async () => jsonResponse(422, JSON.stringify({ error: sentence })),
    });
    const err = await ch.call('RunDetail', ['run_9']).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BridgeError);
    expect((err as BridgeError).message).toBe(sentence);
  });

  it('says what the token refusal says', async () => {
    const sentence = 'this request has no valid token; open the address `ducklm serve` printed, with its token';
    const ch = createHttpChannel('', 'stale', { fetch: async () => jsonResponse(401, JSON.stringify({ error: sentence })) });
    await expect(ch.call('Overview', [])).rejects.toThrow(sentence);
  });

  it('says the server is not answering when the request cannot be made', async () => {
    const ch = createHttpChannel('', TOKEN, {
      fetch: async () => {
        throw new TypeError('Failed to fetch');
      },
    });
    const err = await ch.call('Overview', []).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BridgeError);
    expect((err as BridgeError).message).toBe(NOT_ANSWERING);
  });

  it('names the status when an error answer is not JSON', async () => {
    const ch = createHttpChannel('', TOKEN, {
      fetch: async () => new Response('<html>Bad Gateway</html>', { status: 502 }),
    });
    await expect(ch.call('Overview', [])).rejects.toThrow('HTTP 502');
    const odd = createHttpChannel('', TOKEN, { fetch: async () => new Response('<html>', { status: 200 }) });
    await expect(odd.call('Overview', [])).rejects.toBeInstanceOf(BridgeError);
  });
});

describe('HTTP channel events', () => {
  it('shares one EventSource, with the token, across events and listeners', () => {
    const ch = createHttpChannel('http://127.0.0.1:4321', 'a b', { EventSource: fakeSources() });
    const ledger = vi.fn();
    const ledger2 = vi.fn();
    const tokens = vi.fn();
    const offLedger = ch.on(EVENT_LEDGER, ledger);
    const offLedger2 = ch.on(EVENT_LEDGER, ledger2);
    const offTokens = ch.on(EVENT_TOKENS, tokens);
    expect(FakeEventSource.instances).toHaveLength(1);
    const es = FakeEventSource.instances[0]!;
    expect(es.url).toBe('http://127.0.0.1:4321/api/events?token=a%20b');
    expect(es.listenerCount(EVENT_LEDGER)).toBe(1);

    es.emit(EVENT_LEDGER, '[{"stream":"run_1","seq":1}]');
    es.emit(EVENT_TOKENS, '[{"runId":"run_1","text":"he"}]');
    expect(ledger).toHaveBeenCalledWith([{ stream: 'run_1', seq: 1 }]);
    expect(ledger2).toHaveBeenCalledTimes(1);
    expect(tokens).toHaveBeenCalledWith([{ runId: 'run_1', text: 'he' }]);

    offLedger();
    offLedger(); // harmless twice
    es.emit(EVENT_LEDGER, '[]');
    expect(ledger).toHaveBeenCalledTimes(1);
    expect(ledger2).toHaveBeenCalledTimes(2);
    offLedger2();
    expect(es.listenerCount(EVENT_LEDGER)).toBe(0);
    expect(es.closed).toBe(false);
    offTokens();
    expect(es.closed).toBe(true);

    // A later subscription opens a new stream.
    const off = ch.on(EVENT_TOKENS, tokens);
    expect(FakeEventSource.instances).toHaveLength(2);
    off();
  });

  it('delivers to the other listeners when one throws, and skips data that is not JSON', () => {
    const error = vi.spyOn(console, 'error').mockImplementation(() => {});
    const ch = createHttpChannel('', TOKEN, { EventSource: fakeSources() });
    const good = vi.fn();
    ch.on(EVENT_LEDGER, () => {
      throw new Error('broken screen');
    });
    ch.on(EVENT_LEDGER, good);
    const es = FakeEventSource.instances[0]!;
    es.emit(EVENT_LEDGER, '[1]');
    expect(good).toHaveBeenCalledWith([1]);
    expect(error).toHaveBeenCalled();
    es.emit(EVENT_LEDGER, 'not json');
    expect(good).toHaveBeenCalledTimes(1);
  });

  it('counts the same callback subscribed twice as two subscriptions', () => {
    const ch = createHttpChannel('', TOKEN, { EventSource: fakeSources() });
    const cb = vi.fn();
    const off1 = ch.on(EVENT_LEDGER, cb);
    ch.on(EVENT_LEDGER, cb);
    const es = FakeEventSource.instances[0]!;
    es.emit(EVENT_LEDGER, '[]');
    expect(cb).toHaveBeenCalledTimes(2);
    off1();
    es.emit(EVENT_LEDGER, '[]');
    expect(cb).toHaveBeenCalledTimes(3);
    expect(es.closed).toBe(false);
  });
});

function memoryStorage(initial: Record<string, string> = {}) {
  const data = new Map(Object.entries(initial));
  return {
    getItem: (k: string) => data.get(k) ?? null,
    setItem: (k: string, v: string) => void data.set(k, v),
    data,
  };
}

describe('choosing the HTTP transport', () => {
  it('says how to open a served page that lost its token, instead of "not reachable"', async () => {
    const bare = { location: { href: 'http://127.0.0.1:4321/' }, sessionStorage: memoryStorage() };
    expect(servedWithoutToken(bare)).toBe(true);
    expect(servedWithoutToken({ location: { href: `http://127.0.0.1:4321/?token=${TOKEN}` }, sessionStorage: memoryStorage() })).toBe(false);
    expect(servedWithoutToken({ go: { app: {} }, location: { href: 'http://127.0.0.1:4321/' } })).toBe(false);
    expect(servedWithoutToken({ location: { href: 'wails://wails/' } })).toBe(false);
    const ch = selectChannel(bare);
    await expect(ch.call('Overview', [])).rejects.toThrow(NO_TOKEN);
    expect(NO_TOKEN).toContain('?token=');
  });

  it('is available on a page served with a token, and never in the desktop window', () => {
    const href = `http://127.0.0.1:4321/?token=${TOKEN}`;
    expect(httpAvailable({ location: { href }, sessionStorage: memoryStorage() })).toBe(true);
    expect(httpAvailable({ go: { app: {} }, location: { href } })).toBe(false);
    expect(httpAvailable({ location: { href: 'http://127.0.0.1:4321/' }, sessionStorage: memoryStorage() })).toBe(false);
    expect(httpAvailable({ location: { href: `file:///tmp/index.html?token=${TOKEN}` } })).toBe(false);
    expect(httpAvailable({ location: { href: 'wails://wails/' } })).toBe(false);
    expect(httpAvailable(undefined)).toBe(false);
    // After a reload that lost the token, the tab's stored token still counts.
    const stored = memoryStorage({ [TOKEN_STORAGE_KEY]: TOKEN });
    expect(httpAvailable({ location: { href: 'http://127.0.0.1:4321/' }, sessionStorage: stored })).toBe(true);
  });

  it('reads the token from the address, keeps it for the tab and calls the page origin', async () => {
    const storage = memoryStorage();
    const fetch = vi.fn(async () => jsonResponse(200, '{}'));
    const ch = httpChannelFromLocation(
      { location: { href: `http://127.0.0.1:4321/?token=${TOKEN}#runs` }, sessionStorage: storage },
      { fetch },
    );
    expect(storage.data.get(TOKEN_STORAGE_KEY)).toBe(TOKEN);
    await ch.call('Overview', []);
    const [url, init] = fetch.mock.calls[0] as unknown as [string, RequestInit];
    expect(url).toBe('http://127.0.0.1:4321/api/call/Overview');
    expect((init.headers as Record<string, string>)[TOKEN_HEADER]).toBe(TOKEN);
  });

  it('falls back to the stored token when the address has none', async () => {
    const fetch = vi.fn(async () => jsonResponse(200, '{}'));
    const ch = httpChannelFromLocation(
      { location: { href: 'http://localhost:4321/' }, sessionStorage: memoryStorage({ [TOKEN_STORAGE_KEY]: 'kept' }) },
      { fetch },
    );
    await ch.call('Overview', []);
    const [, init] = fetch.mock.calls[0] as unknown as [string, RequestInit];
    expect((init.headers as Record<string, string>)[TOKEN_HEADER]).toBe('kept');
  });

  it('works when session storage is disabled', async () => {
    const fetch = vi.fn(async () => jsonResponse(200, '{}'));
    const throwing = {
      getItem: () => {
        throw new Error('SecurityError');
      },
      setItem: () => {
        throw new Error('SecurityError');
      },
    };
    const win = { location: { href: `http://127.0.0.1:4321/?token=${TOKEN}` }, sessionStorage: throwing };
    expect(httpAvailable(win)).toBe(true);
    await httpChannelFromLocation(win, { fetch }).call('Overview', []);
    expect(fetch).toHaveBeenCalledTimes(1);
  });
});
