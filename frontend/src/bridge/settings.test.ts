import { describe, expect, it } from 'vitest';
import { fakeApi } from '../test/fakeChannel';
import { BridgeError } from './errors';
import type { Settings } from './types';

// The settings methods over a channel answering as Go does: a nil map or
// slice arrives as null, and each call sends its arguments unchanged.
describe('settings bridge', () => {
  it('reads settings whose models map Go left nil', async () => {
    const { api } = fakeApi({
      GetSettings: () => ({
        settings: { ollamaHost: '', models: null, approvalMode: '', theme: '' },
        dataDir: '/home/ada/.local/share/ducklm',
        ollamaHost: 'http://127.0.0.1:11434',
        defaultHost: 'http://127.0.0.1:11434',
      }),
    });
    await expect(api.getSettings()).resolves.toEqual({
      settings: { ollamaHost: '', models: {}, approvalMode: '', theme: '' },
      dataDir: '/home/ada/.local/share/ducklm',
      ollamaHost: 'http://127.0.0.1:11434',
      defaultHost: 'http://127.0.0.1:11434',
    });
  });

  it('keeps the allowed hosts and memory limit Go sends, and leaves out what it does not', async () => {
    const view = (settings: object) => ({ settings, dataDir: '/d', ollamaHost: 'http://127.0.0.1:11434', defaultHost: 'http://127.0.0.1:11434' });
    const set = { ollamaHost: '', models: {}, approvalMode: '', theme: '', allowedHosts: ['example.com'], worldMemoryMiB: 1024 };
    const { api } = fakeApi({ GetSettings: () => view(set) });
    expect((await api.getSettings()).settings, 'a save from the form sends them back').toEqual(set);
    const { api: unset } = fakeApi({ GetSettings: () => view({ ollamaHost: '', models: {}, approvalMode: '', theme: '' }) });
    const got = (await unset.getSettings()).settings;
    expect(got).not.toHaveProperty('worldMemoryMiB');
    expect(got).not.toHaveProperty('allowedHosts');
  });

  it('sends the settings to save and returns what was stored and the host in use', async () => {
    const s: Settings = { ollamaHost: ' gpu:11500 ', models: { planner: 'qwen2.5:7b' }, approvalMode: 'ask_every', theme: 'dark' };
    const { api, channel } = fakeApi({
      SaveSettings: (sent: Settings) => ({ settings: { ...sent, ollamaHost: 'gpu:11500' }, ollamaHost: 'http://gpu:11500' }),
    });
    const saved = await api.saveSettings(s);
    expect(channel.calls('SaveSettings')).toEqual([[s]]);
    expect(saved).toEqual({ settings: { ...s, ollamaHost: 'gpu:11500' }, ollamaHost: 'http://gpu:11500' });
  });

  it('rejects a refused save with the backend sentence', async () => {
    const sentence = '"ftp://box" is not an Ollama host: Ollama speaks http or https, not ftp; type host:port, e.g. 127.0.0.1:11434';
    const { api } = fakeApi({
      SaveSettings: () => {
        throw new Error(sentence);
      },
    });
    const err = await api.saveSettings({ ollamaHost: 'ftp://box', models: {}, approvalMode: '', theme: '' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BridgeError);
    expect((err as Error).message).toBe(sentence);
  });

  it('checks settings and turns a null problem list into an empty one', async () => {
    const { api, channel } = fakeApi({ CheckSettings: () => ({ valid: true, problems: null }) });
    const s: Settings = { ollamaHost: '127.0.0.1', models: {}, approvalMode: '', theme: 'system' };
    await expect(api.checkSettings(s)).resolves.toEqual({ valid: true, problems: [] });
    expect(channel.calls('CheckSettings')).toEqual([[s]]);
  });

  it('tests a host and normalises its model list', async () => {
    const { api, channel } = fakeApi({
      TestOllama: (host: string) => ({ host: `http://${host}`, reachable: false, error: 'Ollama is not reachable', models: null, sandboxed: true }),
    });
    await expect(api.testOllama('127.0.0.1:1')).resolves.toEqual({
      host: 'http://127.0.0.1:1',
      reachable: false,
      error: 'Ollama is not reachable',
      models: [],
      sandboxed: true,
    });
    expect(channel.calls('TestOllama')).toEqual([['127.0.0.1:1']]);
  });

  it('rejects when Go sends no settings', async () => {
    const { api } = fakeApi({ GetSettings: () => null });
    await expect(api.getSettings()).rejects.toThrow("ducklm's backend sent no settings");
  });
});
