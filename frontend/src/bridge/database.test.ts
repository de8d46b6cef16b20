import { describe, expect, it } from 'vitest';
import { fakeApi } from '../test/fakeChannel';
import { BridgeError } from './errors';

const view = {
  address: 'postgres://ducklm@db:5432/ducklm',
  passwordStored: true,
  inUse: '/home/ada/.local/share/ducklm/ducklm.db',
  shared: false,
  override: '',
  overrideAddress: '',
  nextStart: 'postgres://ducklm@db:5432/ducklm',
  canRestart: false,
};
// Go leaves out local on this machine's database; the bridge makes it null.
const seen = { ...view, local: null };

// The Database field's methods over a channel answering as Go does.
describe('database bridge', () => {
  it('reads the field', async () => {
    const { api, channel } = fakeApi({ GetDatabase: () => view });
    await expect(api.getDatabase()).resolves.toEqual(seen);
    expect(channel.calls('GetDatabase')).toEqual([[]]);
  });

  it('sends the address and password to test, and returns the sentence', async () => {
    const answer = { ok: false, message: 'PostgreSQL at postgres://ducklm@db:5432/ducklm refused the password of user ducklm; check the password', serverVersion: '', schemaVersion: 0, latestSchemaVersion: 5 };
    const { api, channel } = fakeApi({ TestDatabase: () => answer });
    await expect(api.testDatabase({ address: 'postgres://ducklm@db:5432/ducklm', password: 'pw' })).resolves.toEqual(answer);
    expect(channel.calls('TestDatabase')).toEqual([[{ address: 'postgres://ducklm@db:5432/ducklm', password: 'pw' }]]);
  });

  it('saves and returns the field and when it takes effect', async () => {
    const saved = { database: view, message: 'Saved. ducklm opens postgres://ducklm@db:5432/ducklm at its next start; until then this window keeps /d/ducklm.db.' };
    const { api, channel } = fakeApi({ SaveDatabase: () => saved });
    await expect(api.saveDatabase({ address: view.address, password: '' })).resolves.toEqual({ ...saved, database: seen });
    expect(channel.calls('SaveDatabase')).toEqual([[{ address: view.address, password: '' }]]);
  });

  it('copies the local data and turns null lists into empty ones; restarts', async () => {
    const counts = { worlds: 1, runs: 1, forks: 0, checkpoints: 2, streams: 1, events: 9, blobs: 1 };
    const copy = {
      message: 'Copied 1 lineage from /d/ducklm.db (left as it was). Added here: 1 world.',
      added: counts,
      lineages: [{ root: 'world_a', name: 'grid', domain: 'simulated', problem: '', import: { report: { checks: {}, counts, roots: null, worlds: null }, imported: true, added: counts, updated: 0, alreadyPresent: false, addedIds: null } }],
    };
    const { api, channel } = fakeApi({ CopyLocalToTeam: () => copy, RestartApp: () => null });
    const got = await api.copyLocalToTeam('op-1');
    expect(channel.calls('CopyLocalToTeam')).toEqual([['op-1']]);
    expect(got.lineages[0]?.import.addedIds).toEqual([]);
    expect(got.lineages[0]?.import.report.roots).toEqual([]);
    await api.restartApp();
    expect(channel.calls('RestartApp')).toEqual([[]]);
    const { api: none } = fakeApi({ CopyLocalToTeam: () => ({ message: 'nothing', added: counts, lineages: null }) });
    await expect(none.copyLocalToTeam('')).resolves.toMatchObject({ lineages: [] });
  });

  it('rejects a refused address with the backend sentence, and a missing answer', async () => {
    const sentence = '"mysql://db/x" is not a PostgreSQL address: it starts with postgres://';
    const { api } = fakeApi({
      SaveDatabase: () => {
        throw new Error(sentence);
      },
      GetDatabase: () => null,
    });
    const err = await api.saveDatabase({ address: 'mysql://db/x', password: '' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BridgeError);
    expect((err as Error).message).toBe(sentence);
    await expect(api.getDatabase()).rejects.toThrow("ducklm's backend sent no database setting");
  });
});

describe('workers bridge', () => {
  it('turns Go’s nil worker and job lists into empty ones', async () => {
    const w = { id: 'w', host: 'h', pid: 1, slots: 1, version: 'v', startedAt: '', heartbeatAt: '', stoppedAt: '', state: 'idle', jobs: null, done: 0 };
    const { api } = fakeApi({ Workers: () => ({ shared: true, workers: [w], heartbeatMs: 5000, lostAfterMs: 15000, now: '' }) });
    expect((await api.workers()).workers[0]!.jobs).toEqual([]);
    const { api: none } = fakeApi({ Workers: () => ({ shared: false, workers: null, heartbeatMs: 5000, lostAfterMs: 15000, now: '' }) });
    expect((await none.workers()).workers).toEqual([]);
  });
});
