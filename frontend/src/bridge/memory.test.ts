import { describe, expect, it } from 'vitest';
import { fakeApi } from '../test/fakeChannel';
import { BridgeError } from './errors';

// The memory methods over a channel answering as Go does: nil slices arrive
// as null, and each call sends its arguments unchanged.
describe('memory bridge', () => {
  it('normalises null lists from Go', async () => {
    const { api } = fakeApi({
      SearchMemories: () => null,
      ListMemories: () => ({ memories: null, next: '' }),
      MemoryDetail: () => ({ memory: { id: 'mem_1' }, dimensions: 384, sources: null }),
      MemoryEmbedders: () => ({
        current: 'ducklm-hash-384',
        builtin: 'ducklm-hash-384',
        ollama: { host: 'http://127.0.0.1:11434', reachable: false, models: null, sandboxed: true },
        embedding: null,
      }),
    });
    await expect(api.searchMemories({ query: 'x', type: '', reality: '', runId: '', k: 0 })).resolves.toEqual([]);
    await expect(api.listMemories({ type: '', reality: '', runId: '', limit: 0, before: '' })).resolves.toEqual({ memories: [], next: '' });
    await expect(api.memoryDetail('mem_1')).resolves.toMatchObject({ sources: [], dimensions: 384 });
    const ch = await api.memoryEmbedders();
    expect(ch.embedding).toEqual([]);
    expect(ch.ollama.models).toEqual([]);
  });

  it('passes the arguments through and reads the answers', async () => {
    const { api, channel } = fakeApi({
      SearchMemories: () => [],
      ListMemories: () => ({ memories: [], next: '1700000000000000.mem_9' }),
      DeleteMemory: () => null,
      ReindexMemories: () => ({ model: 'nomic-embed-text:latest', previous: 'ducklm-hash-384', reembedded: 3, indexed: 3, tookNs: 5e6, settingsSaved: true }),
      CancelReindex: () => true,
      MemoryStatus: () => ({ memories: 3, model: 'ducklm-hash-384', builtin: true, indexed: 3, stale: 0, loadedFrom: 'database', loadTimeNs: 1e6 }),
    });
    const search = { query: 'nginx port', type: 'fact' as const, reality: 'external_real' as const, runId: '', k: 5 };
    await api.searchMemories(search);
    expect(channel.calls('SearchMemories')).toEqual([[search]]);
    const page = await api.listMemories({ type: '', reality: '', runId: 'run_1', limit: 25, before: '' });
    expect(page.next).toBe('1700000000000000.mem_9');
    expect(channel.calls('ListMemories')).toEqual([[{ type: '', reality: '', runId: 'run_1', limit: 25, before: '' }]]);
    await expect(api.deleteMemory('mem_1')).resolves.toBeUndefined();
    expect(channel.calls('DeleteMemory')).toEqual([['mem_1']]);
    await expect(api.reindexMemories({ model: 'nomic-embed-text', op: 'op_1' })).resolves.toMatchObject({ reembedded: 3 });
    expect(channel.calls('ReindexMemories')).toEqual([[{ model: 'nomic-embed-text', op: 'op_1' }]]);
    await expect(api.cancelReindex()).resolves.toBe(true);
    await expect(api.memoryStatus()).resolves.toMatchObject({ memories: 3, builtin: true });
  });

  it('rejects with the backend sentence, or when Go sends nothing', async () => {
    const { api } = fakeApi({
      DeleteMemory: () => {
        throw new Error('there is no memory mem_1');
      },
      MemoryDetail: () => null,
      CancelReindex: () => null,
    });
    await expect(api.deleteMemory('mem_1')).rejects.toThrow(new BridgeError('there is no memory mem_1'));
    await expect(api.memoryDetail('mem_1')).rejects.toThrow(BridgeError);
    await expect(api.cancelReindex()).resolves.toBe(false);
  });
});
