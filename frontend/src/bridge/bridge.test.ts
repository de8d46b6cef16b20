// @vitest-environment jsdom
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { event, overview } from '../test/fixtures';
import { type FakeWails, installFakeWails } from '../test/fakeWails';
import { BridgeError, LEDGER_EVENTS, UNREACHABLE, api, copyText, selectApi, toBridgeError, transports } from './index';
import { createWailsApi, available } from './wails';

describe('toBridgeError', () => {
  it('keeps the sentence of a string, an Error or an error-like object', () => {
    expect(toBridgeError('The data directory is locked by another ducklm.').message).toBe(
      'The data directory is locked by another ducklm.',
    );
    expect(toBridgeError(new TypeError('boom')).message).toBe('boom');
    expect(toBridgeError({ message: 'from an object' }).message).toBe('from an object');
  });

  it('never produces an empty message', () => {
    expect(toBridgeError('').message).not.toBe('');
    expect(toBridgeError(undefined).message).not.toBe('');
  });

  it('passes a BridgeError through', () => {
    const e = new BridgeError('same');
    expect(toBridgeError(e)).toBe(e);
  });
});

describe('Wails transport', () => {
  let wails: FakeWails;
  beforeEach(() => {
    wails = installFakeWails();
  });
  afterEach(() => {
    wails.uninstall();
  });

  it('is chosen when the window has window.go', () => {
    expect(available(globalThis)).toBe(true);
    expect(transports.map((t) => t.name)).toContain('wails');
  });

  it('returns the overview and turns a null event list into an empty one', async () => {
    const o = overview();
    wails.Overview.mockResolvedValueOnce(o);
    await expect(createWailsApi().overview()).resolves.toEqual(o);
    wails.Overview.mockResolvedValueOnce({ ...o, recentEvents: null });
    await expect(createWailsApi().overview()).resolves.toMatchObject({ recentEvents: [] });
  });

  it('rejects with a BridgeError carrying the Go sentence', async () => {
    const sentence = 'The data directory was written by a newer ducklm (schema 9); this ducklm knows schema 2.';
    wails.Overview.mockRejectedValueOnce(sentence);
    const err = await createWailsApi()
      .overview()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BridgeError);
    expect((err as BridgeError).message).toBe(sentence);
  });

  it('rejects with a BridgeError when a binding throws synchronously', async () => {
    wails.Checks.mockImplementationOnce(() => {
      throw new Error('binding missing');
    });
    await expect(createWailsApi().checks()).rejects.toThrow(BridgeError);
  });

  it('turns null checks into an empty list', async () => {
    wails.Checks.mockResolvedValueOnce(null);
    await expect(createWailsApi().checks()).resolves.toEqual([]);
  });

  it('delivers ledger batches until unsubscribed', () => {
    const api = createWailsApi();
    const cb = vi.fn();
    const off = api.onLedgerEvents(cb);
    const batch = [event({ seq: 1, pos: 1 }), event({ seq: 2, pos: 2 })];
    wails.emit(LEDGER_EVENTS, batch);
    expect(cb).toHaveBeenCalledExactlyOnceWith(batch);

    off();
    expect(wails.listenerCount(LEDGER_EVENTS)).toBe(0);
    wails.emit(LEDGER_EVENTS, [event({ seq: 3, pos: 3 })]);
    expect(cb).toHaveBeenCalledOnce();
    off(); // a second call is harmless
  });

  it('ignores empty or null batches', () => {
    const cb = vi.fn();
    createWailsApi().onLedgerEvents(cb);
    wails.emit(LEDGER_EVENTS, null);
    wails.emit(LEDGER_EVENTS, []);
    expect(cb).not.toHaveBeenCalled();
  });

  it('copies through the Wails runtime', async () => {
    await copyText('/home/ada/.local/share/ducklm');
    expect(wails.ClipboardSetText).toHaveBeenCalledWith('/home/ada/.local/share/ducklm');
  });
});

describe('without a transport', () => {
  it('rejects every call with a clear sentence and subscribes to nothing', async () => {
    const api = selectApi({});
    for (const p of [api.overview(), api.checks()]) {
      const err = await p.catch((e: unknown) => e);
      expect(err).toBeInstanceOf(BridgeError);
      expect((err as BridgeError).message).toBe(UNREACHABLE);
    }
    const off = api.onLedgerEvents(() => {});
    expect(off).toBeTypeOf('function');
    off();
  });

  it('does not mistake a page with window.runtime alone for the desktop window', () => {
    expect(available({ runtime: {} })).toBe(false);
    expect(available({ go: { app: { App: {} } } })).toBe(false);
  });
});

describe('api', () => {
  // The only test that touches `api`: its transport is fixed on first use.
  it('uses the Wails window when it is there on first use', async () => {
    const wails = installFakeWails();
    try {
      wails.Checks.mockResolvedValueOnce([{ name: 'Data directory', status: 'ok', detail: 'writable' }]);
      await expect(api.checks()).resolves.toHaveLength(1);
      expect(wails.Checks).toHaveBeenCalledOnce();
    } finally {
      wails.uninstall();
    }
  });
});
