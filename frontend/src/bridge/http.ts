// The HTTP transport: a page served by `ducklm serve` calls the Go API facade
// with POST /api/call/{Method} and follows the window's events through one
// Server-Sent Events stream (the contract is in channel.ts). Every request
// carries the token from the page's address; nothing else is trusted.
import type { Channel, Unsubscribe } from './channel';
import { BridgeError } from './errors';

/** The sentence shown when `ducklm serve` cannot be reached at all. */
export const NOT_ANSWERING =
  'ducklm serve is not answering; check that it is still running in its terminal, then reload this page';

/** The request header that carries the token (backend/httpapi.TokenHeader). */
export const TOKEN_HEADER = 'X-Ducklm-Token';

/** Where the page's token is kept for this tab, so a reload keeps working. */
export const TOKEN_STORAGE_KEY = 'ducklm.serve.token';

/** What createHttpChannel uses from the page; tests pass fakes. */
export interface HttpDeps {
  fetch?: typeof fetch;
  EventSource?: typeof EventSource;
}

type Listener = { cb: (payload: unknown) => void };

/**
 * createHttpChannel returns the Channel of a `ducklm serve` at baseUrl ("" for
 * the page's own server). One EventSource is shared by every listener and
 * opened by the first; the browser reconnects it, and the server resumes
 * after the last event id it sent.
 */
export function createHttpChannel(baseUrl: string, token: string, deps: HttpDeps = {}): Channel {
  const base = baseUrl.replace(/\/+$/, '');
  const listeners = new Map<string, Set<Listener>>();
  const handlers = new Map<string, (e: MessageEvent) => void>();
  let source: EventSource | undefined;

  const openSource = (): EventSource => {
    if (source) return source;
    const ES = deps.EventSource ?? globalThis.EventSource;
    source = new ES(`${base}/api/events?token=${encodeURIComponent(token)}`);
    return source;
  };

  const dispatch = (event: string) => (e: MessageEvent) => {
    let payload: unknown;
    try {
      payload = JSON.parse(String(e.data));
    } catch {
      return; // the server only sends JSON; anything else is not ours to deliver
    }
    for (const l of [...(listeners.get(event) ?? [])]) {
      try {
        l.cb(payload);
      } catch (err) {
        // One screen's failing listener must not starve the others.
        console.error(`a listener of ${event} failed`, err);
      }
    }
  };

  return {
    name: 'http',

    async call(method: string, args: unknown[]): Promise<unknown> {
      const doFetch = deps.fetch ?? globalThis.fetch;
      let res: Response;
      let text: string;
      try {
        res = await doFetch(`${base}/api/call/${encodeURIComponent(method)}`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', [TOKEN_HEADER]: token },
          body: JSON.stringify(args),
          cache: 'no-store',
          credentials: 'omit',
        });
        text = await res.text();
      } catch (cause) {
        throw new BridgeError(NOT_ANSWERING, { cause });
      }
      let body: unknown;
      try {
        body = text.trim() === '' ? null : JSON.parse(text);
      } catch (cause) {
        throw new BridgeError(
          res.ok
            ? `ducklm serve answered ${method} with something that is not JSON`
            : `ducklm serve refused the call to ${method} (HTTP ${res.status}) without saying why`,
          { cause },
        );
      }
      if (!res.ok) {
        throw new BridgeError(
          sentenceOf(body) ?? `ducklm serve refused the call to ${method} (HTTP ${res.status}) without saying why`,
        );
      }
      return body;
    },

    on(event: string, cb: (payload: unknown) => void): Unsubscribe {
      const es = openSource();
      let set = listeners.get(event);
      if (!set) {
        set = new Set();
        listeners.set(event, set);
        const h = dispatch(event);
        handlers.set(event, h);
        es.addEventListener(event, h as EventListener);
      }
      // A wrapper, so the same callback subscribed twice is two subscriptions.
      const entry: Listener = { cb };
      const mine = set;
      mine.add(entry);
      let done = false;
      return () => {
        if (done) return;
        done = true;
        mine.delete(entry);
        if (mine.size === 0 && listeners.get(event) === mine) {
          const h = handlers.get(event);
          if (h) source?.removeEventListener(event, h as EventListener);
          handlers.delete(event);
          listeners.delete(event);
        }
        if (listeners.size === 0 && source) {
          source.close();
          source = undefined;
        }
      };
    },
  };
}

function sentenceOf(body: unknown): string | undefined {
  if (body !== null && typeof body === 'object' && 'error' in body) {
    const e = (body as { error: unknown }).error;
    if (typeof e === 'string' && e.trim() !== '') return e;
  }
  return undefined;
}

/** The parts of a window the HTTP transport looks at. */
interface PageWindow {
  go?: unknown;
  location?: { href?: string };
  sessionStorage?: Pick<Storage, 'getItem' | 'setItem'>;
}

function tokenInUrl(w: PageWindow): string | null {
  try {
    const url = new URL(w.location?.href ?? '');
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
    const t = url.searchParams.get('token');
    return t !== null && t !== '' ? t : null;
  } catch {
    return null;
  }
}

function storedToken(w: PageWindow): string | null {
  try {
    const t = w.sessionStorage?.getItem(TOKEN_STORAGE_KEY) ?? null;
    return t !== '' ? t : null;
  } catch {
    return null; // storage disabled
  }
}

function isServedPage(w: PageWindow): boolean {
  try {
    const p = new URL(w.location?.href ?? '').protocol;
    return p === 'http:' || p === 'https:';
  } catch {
    return false;
  }
}

/**
 * httpAvailable reports whether this page was served by `ducklm serve`: it is
 * not the desktop window (no window.go) and its address (or, after the token
 * was seen once in this tab, its session storage) holds a token.
 */
export function httpAvailable(win: unknown = globalThis): boolean {
  const w = (win ?? {}) as PageWindow;
  if (w.go !== undefined && w.go !== null) return false;
  if (!isServedPage(w)) return false;
  return tokenInUrl(w) !== null || storedToken(w) !== null;
}

/**
 * servedWithoutToken reports whether this page came from `ducklm serve` (an
 * http page outside the desktop window) but carries no token: its calls can
 * only fail, and the fix is the address the server printed.
 */
export function servedWithoutToken(win: unknown = globalThis): boolean {
  const w = (win ?? {}) as PageWindow;
  if (w.go !== undefined && w.go !== null) return false;
  return isServedPage(w) && tokenInUrl(w) === null && storedToken(w) === null;
}

/**
 * httpChannelFromLocation returns the Channel to the server that served this
 * page, with the token from the page's address (kept in session storage, so
 * a reload without it keeps working) or, failing that, the stored one.
 */
export function httpChannelFromLocation(win: unknown = globalThis, deps: HttpDeps = {}): Channel {
  const w = (win ?? {}) as PageWindow;
  let token = tokenInUrl(w);
  if (token !== null) {
    try {
      w.sessionStorage?.setItem(TOKEN_STORAGE_KEY, token);
    } catch {
      // Without storage a reload still has the token in its address.
    }
  } else {
    token = storedToken(w);
  }
  let origin = '';
  try {
    origin = new URL(w.location?.href ?? '').origin;
  } catch {
    // A relative base: the page's own server.
  }
  // With no token at all, every call answers with the server's sentence on
  // how to open the page with one.
  return createHttpChannel(origin === 'null' ? '' : origin, token ?? '', deps);
}
