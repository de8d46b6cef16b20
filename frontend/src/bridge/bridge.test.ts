// @vitest-environment jsdom
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { event, overview } from '../test/fixtures';
import { type FakeWails, METHODS, installFakeWails } from '../test/fakeWails';
import { fakeApi } from '../test/fakeChannel';
import { BridgeError, LEDGER_EVENTS, UNREACHABLE, api, channels, copyText, selectApi, selectChannel, toBridgeError } from './index';
import { createApi } from './api';
import { EVENT_PROGRESS, EVENT_TOKENS } from './channel';
import { available, createWailsChannel } from './wails';
import apiSource from './api.ts?raw';
import boundSource from '../../wailsjs/go/app/App.d.ts?raw';

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

describe('Wails channel', () => {
  let wails: FakeWails;
  beforeEach(() => {
    wails = installFakeWails();
  });
  afterEach(() => {
    wails.uninstall();
  });

  it('is chosen when the window has window.go', () => {
    expect(available(globalThis)).toBe(true);
    expect(channels.map((t) => t.name)[0]).toBe('wails');
    expect(selectChannel(globalThis).name).toBe('wails');
  });

  it('calls the generated binding of the same name with the arguments in order', async () => {
    wails.History.mockResolvedValueOnce({ total: 0, offset: 0, events: [], inherited: 0 });
    await createWailsChannel().call('History', ['run_1', 10, 500]);
    expect(wails.History).toHaveBeenCalledExactlyOnceWith('run_1', 10, 500);
  });

  it('maps every method of the Go API to its binding', async () => {
    const ch = createWailsChannel();
    for (const m of METHODS) {
      wails[m].mockResolvedValueOnce(m);
      await expect(ch.call(m, [])).resolves.toBe(m);
    }
  });

  it('knows every method the API calls, and each is bound by Go', () => {
    // The generated bindings are the Go side's list; api.ts is what the
    // screens can call. A method missing from either fails here, not in a
    // window that says "rebuild the app".
    const bound = [...boundSource.matchAll(/export function (\w+)\(/g)].map((m) => m[1]);
    const called = [...apiSource.matchAll(/invoke\('(\w+)'/g)].map((m) => m[1]!);
    expect(called.length).toBeGreaterThan(40);
    for (const m of called) {
      expect(bound, `Go binds ${m}`).toContain(m);
      expect(METHODS as readonly string[], `the fake window has ${m}`).toContain(m);
    }
  });

  it('rejects an unknown method with a BridgeError, without calling anything', async () => {
    const err = await createWailsChannel()
      .call('DropDatabase', [])
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BridgeError);
    expect((err as Error).message).toContain('DropDatabase');
  });

  it('rejects with a BridgeError carrying the Go sentence', async () => {
    const sentence = 'The data directory was written by a newer ducklm (schema 9); this ducklm knows schema 2.';
    wails.Overview.mockRejectedValueOnce(sentence);
    const err = await createApi(createWailsChannel())
      .overview()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BridgeError);
    expect((err as BridgeError).message).toBe(sentence);
  });

  it('rejects with a BridgeError when a binding throws synchronously', async () => {
    wails.Checks.mockImplementationOnce(() => {
      throw new Error('binding missing');
    });
    await expect(createApi(createWailsChannel()).checks()).rejects.toThrow(BridgeError);
  });

  it('delivers window events until unsubscribed', () => {
    const cb = vi.fn();
    const off = createWailsChannel().on(LEDGER_EVENTS, cb);
    wails.emit(LEDGER_EVENTS, [1]);
    expect(cb).toHaveBeenCalledExactlyOnceWith([1]);
    off();
    expect(wails.listenerCount(LEDGER_EVENTS)).toBe(0);
    off(); // a second call is harmless
  });

  it('copies through the Wails runtime', async () => {
    await copyText('/home/ada/.local/share/ducklm');
    expect(wails.ClipboardSetText).toHaveBeenCalledWith('/home/ada/.local/share/ducklm');
  });
});

describe('api over the Wails channel', () => {
  let wails: FakeWails;
  beforeEach(() => {
    wails = installFakeWails();
  });
  afterEach(() => {
    wails.uninstall();
  });
  const make = () => createApi(createWailsChannel());

  it('returns the overview and turns a null event list into an empty one', async () => {
    const o = overview();
    wails.Overview.mockResolvedValueOnce(o);
    await expect(make().overview()).resolves.toEqual(o);
    wails.Overview.mockResolvedValueOnce({ ...o, recentEvents: null });
    await expect(make().overview()).resolves.toMatchObject({ recentEvents: [] });
  });

  it('turns null lists into empty ones', async () => {
    const a = make();
    for (const m of ['Checks', 'Runs', 'Approvals', 'ToolCatalog', 'RiskRules', 'WorldExamples'] as const) {
      wails[m].mockResolvedValueOnce(null);
    }
    await expect(a.checks()).resolves.toEqual([]);
    await expect(a.runs()).resolves.toEqual([]);
    await expect(a.approvals()).resolves.toEqual([]);
    await expect(a.toolCatalog()).resolves.toEqual([]);
    await expect(a.riskRules()).resolves.toEqual([]);
    await expect(a.worldExamples()).resolves.toEqual([]);
  });

  it('turns null lists nested in results into empty ones', async () => {
    const a = make();
    wails.Lineage.mockResolvedValueOnce({ nodes: null, edges: null });
    await expect(a.lineage()).resolves.toEqual({ nodes: [], edges: [] });
    wails.LineageOutline.mockResolvedValueOnce({ worlds: null, forks: null });
    await expect(a.lineageOutline()).resolves.toEqual({ worlds: [], forks: [] });
    wails.ValidatePlan.mockResolvedValueOnce({ valid: true, problems: null, steps: 1 });
    await expect(a.validatePlan('{}')).resolves.toEqual({ valid: true, problems: [], steps: 1 });
    wails.Models.mockResolvedValueOnce({ host: 'h', reachable: false, models: null, sandboxed: false });
    await expect(a.models()).resolves.toMatchObject({ models: [] });
    wails.History.mockResolvedValueOnce({ total: 0, offset: 0, events: null, inherited: 0 });
    await expect(a.history('run_1', 0, 100)).resolves.toMatchObject({ events: [], segments: [] });
    wails.SearchHistory.mockResolvedValueOnce({ total: 9, inherited: 0, matches: null, from: 0, next: 9 });
    const filter = { types: ['world.step'], reality: '' as const, text: 'x', regex: false };
    await expect(a.searchHistory('run_1', filter, 0, 50)).resolves.toMatchObject({ matches: [], next: 9 });
    expect(wails.SearchHistory).toHaveBeenCalledWith('run_1', filter, 0, 50);
    wails.HistoryTypes.mockResolvedValueOnce(null);
    await expect(a.historyTypes('run_1')).resolves.toEqual([]);
    wails.Diff.mockResolvedValueOnce({ a: 'x', b: 'y', sharedEvents: 0, stateA: null, stateB: null, stateChanges: null, eventsA: null, eventsB: null, eventsATotal: 0, eventsBTotal: 0 });
    await expect(a.diff('x', 'y')).resolves.toMatchObject({ stateChanges: [], eventsA: [], eventsB: [] });
    wails.WorldDetail.mockResolvedValueOnce({ world: {}, run: {}, runs: null, checkpoints: null });
    await expect(a.worldDetail('run_1')).resolves.toMatchObject({ runs: [], checkpoints: [] });
    wails.RunWorld.mockResolvedValueOnce({ run: {}, state: { pos: [0, 0] }, done: false });
    await expect(a.runWorld({ runId: 'r', action: '', steps: 1, checkpointEvery: 0 })).resolves.toMatchObject({ emitted: [] });
  });

  it('normalises a run state: null steps, graph nodes and depends_on', async () => {
    wails.RunDetail.mockResolvedValueOnce({
      run: { id: 'run_1' },
      state: {
        runId: 'run_1',
        request: { task: 't', plan: { nodes: [{ id: 'a', kind: 'tool', depends_on: null }] } },
        graph: { nodes: [{ id: 'a', kind: 'tool', depends_on: null }] },
        steps: { a: { node: { id: 'a', kind: 'tool', depends_on: null }, state: 'done', result: { ok: true } } },
      },
      approvals: null,
    });
    const d = await make().runDetail('run_1');
    expect(d.approvals).toEqual([]);
    expect(d.state?.graph?.nodes[0]?.depends_on).toEqual([]);
    expect(d.state?.request.plan?.nodes[0]?.depends_on).toEqual([]);
    expect(d.state?.steps.a?.node.depends_on).toEqual([]);
    expect(d.state?.steps.a?.result?.filesChanged).toEqual([]);

    wails.RunDetail.mockResolvedValueOnce({ run: { id: 'run_2' }, state: { runId: 'run_2', request: {}, steps: null }, approvals: [] });
    const d2 = await make().runDetail('run_2');
    expect(d2.state?.steps).toEqual({});
    expect(d2.state?.graph).toBeUndefined();
  });

  it('passes the arguments of each call through unchanged', async () => {
    const a = make();
    const input = { runId: 'run_1', requestId: 'apr_1', approve: true, args: '{"command":"ls"}', network: false, reason: '', idempotencyKey: 'k' };
    wails.Answer.mockResolvedValueOnce(null);
    await expect(a.answer(input)).resolves.toBeUndefined();
    expect(wails.Answer).toHaveBeenCalledWith(input);
    wails.Diff.mockResolvedValueOnce({});
    await a.diff('run_a', 'run_b');
    expect(wails.Diff).toHaveBeenCalledWith('run_a', 'run_b');
    wails.ChooseFolder.mockResolvedValueOnce('');
    await expect(a.chooseFolder('Workspace')).resolves.toBe('');
    expect(wails.ChooseFolder).toHaveBeenCalledWith('Workspace');
  });

  it('rejects when Go sends nothing where a value is due', async () => {
    wails.RunDetail.mockResolvedValueOnce(null);
    await expect(make().runDetail('run_1')).rejects.toThrow(BridgeError);
  });

  it('delivers ledger batches until unsubscribed, ignoring empty ones', () => {
    const a = make();
    const cb = vi.fn();
    const off = a.onLedgerEvents(cb);
    const batch = [event({ seq: 1, pos: 1 }), event({ seq: 2, pos: 2 })];
    wails.emit(LEDGER_EVENTS, batch);
    wails.emit(LEDGER_EVENTS, null);
    wails.emit(LEDGER_EVENTS, []);
    expect(cb).toHaveBeenCalledExactlyOnceWith(batch);

    off();
    expect(wails.listenerCount(LEDGER_EVENTS)).toBe(0);
    wails.emit(LEDGER_EVENTS, [event({ seq: 3, pos: 3 })]);
    expect(cb).toHaveBeenCalledOnce();
    off();
  });

  it('delivers token batches', () => {
    const cb = vi.fn();
    const off = make().onTokens(cb);
    wails.emit(EVENT_TOKENS, [{ runId: 'run_1', text: 'Hel' }]);
    expect(cb).toHaveBeenCalledExactlyOnceWith([{ runId: 'run_1', text: 'Hel' }]);
    off();
    expect(wails.listenerCount(EVENT_TOKENS)).toBe(0);
  });

  it('normalises bundle reports and import results', async () => {
    const a = make();
    const report = {
      file: '/tmp/x.ducklm', bytes: 10, ok: false, problem: 'this is not a ducklm bundle', checks: { manifest: false, signature: false, entries: false, references: false },
      formatVersion: 0, appVersion: '', roots: null, scope: { ancestry: false, descendants: false }, entries: 0, signed: false,
      trusted: false, trust: 'unsigned', counts: { worlds: 0, runs: 0, forks: 0, checkpoints: 0, streams: 0, events: 0, blobs: 0 }, worlds: null,
    };
    wails.VerifyBundle.mockResolvedValueOnce(report);
    await expect(a.verifyBundle('/tmp/x.ducklm', 'op_1')).resolves.toMatchObject({ roots: [], worlds: [], problem: 'this is not a ducklm bundle' });
    expect(wails.VerifyBundle).toHaveBeenCalledWith('/tmp/x.ducklm', 'op_1');

    wails.ImportBundle.mockResolvedValueOnce({
      report: { ...report, ok: true, worlds: [{ id: 'wld_1', name: 'grid', domain: 'simulated', runs: null }] },
      imported: true, added: report.counts, updated: 0, alreadyPresent: true, addedIds: null,
    });
    const input = { path: '/tmp/x.ducklm', allowUnsigned: true, op: 'op_2' };
    const r = await a.importBundle(input);
    expect(wails.ImportBundle).toHaveBeenCalledWith(input);
    expect(r.addedIds).toEqual([]);
    expect(r.report.roots).toEqual([]);
    expect(r.report.worlds[0]?.runs).toEqual([]);
    wails.ImportBundle.mockResolvedValueOnce(null);
    await expect(a.importBundle(input)).rejects.toThrow(BridgeError);
  });

  it('passes bundle exports and dialogs through', async () => {
    const a = make();
    const input = { root: 'run_1', scope: 'ancestry' as const, path: '/tmp/x.ducklm', replace: false, op: 'op_3' };
    const result = { file: '/tmp/x.ducklm', bytes: 2048, signer: 'ab'.repeat(32), root: 'run_1', scope: 'ancestry', counts: {} };
    wails.ExportBundle.mockResolvedValueOnce(result);
    await expect(a.exportBundle(input)).resolves.toEqual(result);
    expect(wails.ExportBundle).toHaveBeenCalledWith(input);
    wails.NativeDialogs.mockResolvedValueOnce(true);
    await expect(a.nativeDialogs()).resolves.toBe(true);
    wails.NativeDialogs.mockResolvedValueOnce(null);
    await expect(a.nativeDialogs()).resolves.toBe(false);
    wails.ChooseBundleToSave.mockResolvedValueOnce('/home/ada/grid.ducklm');
    await expect(a.chooseBundleToSave('Export', 'grid')).resolves.toBe('/home/ada/grid.ducklm');
    expect(wails.ChooseBundleToSave).toHaveBeenCalledWith('Export', 'grid');
    wails.ChooseBundleToOpen.mockResolvedValueOnce(null);
    await expect(a.chooseBundleToOpen('Import')).resolves.toBe('');
    wails.SuggestBundlePath.mockResolvedValueOnce('/home/ada/Documents/grid.ducklm');
    await expect(a.suggestBundlePath('grid')).resolves.toBe('/home/ada/Documents/grid.ducklm');
  });

  it('delivers progress batches', () => {
    const cb = vi.fn();
    const off = make().onProgress(cb);
    const p = { op: 'op_1', phase: 'import', done: 3, total: 9, unit: 'entries' };
    wails.emit(EVENT_PROGRESS, [p]);
    wails.emit(EVENT_PROGRESS, null);
    expect(cb).toHaveBeenCalledExactlyOnceWith([p]);
    off();
    expect(wails.listenerCount(EVENT_PROGRESS)).toBe(0);
  });
});

describe('trusted signers', () => {
  it('turns a null list into an empty one and passes the fingerprint through', async () => {
    const { api: a, channel } = fakeApi({
      TrustedSigners: () => ({ own: '0f0f 0f0f', ownFingerprint: '0f0f0f0f', signers: null, file: '/d/trusted_keys' }),
      ForgetSigner: () => true,
    });
    await expect(a.trustedSigners()).resolves.toEqual({ own: '0f0f 0f0f', ownFingerprint: '0f0f0f0f', signers: [], file: '/d/trusted_keys' });
    await expect(a.forgetSigner('ab'.repeat(32))).resolves.toBe(true);
    expect(channel.calls('ForgetSigner')).toEqual([['ab'.repeat(32)]]);
    channel.handle('ForgetSigner', () => null);
    await expect(a.forgetSigner('cd'.repeat(32))).resolves.toBe(false);
    channel.handle('TrustedSigners', () => null);
    await expect(a.trustedSigners()).rejects.toThrow(BridgeError);
  });
});

describe('without a transport', () => {
  it('rejects every call with a clear sentence and subscribes to nothing', async () => {
    const a = selectApi({});
    for (const p of [a.overview(), a.checks(), a.runs(), a.lineage()]) {
      const err = await p.catch((e: unknown) => e);
      expect(err).toBeInstanceOf(BridgeError);
      expect((err as BridgeError).message).toBe(UNREACHABLE);
    }
    const off = a.onLedgerEvents(() => {});
    expect(off).toBeTypeOf('function');
    off();
  });

  it('does not mistake a page with window.runtime alone for the desktop window', () => {
    expect(available({ runtime: {} })).toBe(false);
    expect(available({ go: { app: { App: {} } } })).toBe(false);
  });

  it('takes the first available channel factory', () => {
    const first = { name: 'a', available: () => false, create: vi.fn() };
    const second = { name: 'b', available: () => true, create: vi.fn(() => ({ name: 'b', call: vi.fn(), on: vi.fn() })) };
    expect(selectChannel({}, [first, second]).name).toBe('b');
    expect(first.create).not.toHaveBeenCalled();
  });
});

describe('api', () => {
  // The only test that touches `api`: its channel is fixed on first use.
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
