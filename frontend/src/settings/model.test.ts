import { describe, expect, it } from 'vitest';
import type { Settings } from '../bridge/types';
import { byField, isEmbedding, normal, roleModels, sameModel, sameSettings } from './model';

const OLLAMA = ['qwen2.5:7b', 'nomic-embed-text:latest', 'llama3.2:3b', 'all-minilm', 'library/bge-m3'];

const base: Settings = { ollamaHost: '', models: {}, approvalMode: '', theme: '' };

describe('isEmbedding', () => {
  it('knows embedding models by name, as the router does', () => {
    expect(OLLAMA.filter(isEmbedding)).toEqual(['nomic-embed-text:latest', 'all-minilm', 'library/bge-m3']);
  });
});

describe('sameModel', () => {
  it('ignores case and a :latest tag', () => {
    expect(sameModel('nomic-embed-text', 'Nomic-Embed-Text:latest')).toBe(true);
    expect(sameModel('qwen2.5:7b', 'qwen2.5:14b')).toBe(false);
  });
});

describe('roleModels', () => {
  it('offers chat models to chat roles and never an embedding model', () => {
    expect(roleModels('planner', OLLAMA, '')).toEqual({ fit: ['qwen2.5:7b', 'llama3.2:3b'], other: [] });
  });

  it('offers embedding models first to the embedder, and the rest apart', () => {
    expect(roleModels('embedder', OLLAMA, '')).toEqual({
      fit: ['nomic-embed-text:latest', 'all-minilm', 'library/bge-m3'],
      other: ['qwen2.5:7b', 'llama3.2:3b'],
    });
  });

  it('says when the chosen model is not in this Ollama', () => {
    expect(roleModels('coder', OLLAMA, 'deepseek-coder:6.7b').missing).toBe('deepseek-coder:6.7b');
    expect(roleModels('embedder', OLLAMA, 'nomic-embed-text').missing, 'a :latest tag is the same model').toBeUndefined();
    expect(roleModels('embedder', [], 'ducklm-hash-384').missing, 'the built-in embedder needs no Ollama').toBeUndefined();
  });
});

describe('sameSettings', () => {
  it('sees no change where saving would store the same', () => {
    expect(sameSettings(base, { ...base, ollamaHost: '  ' })).toBe(true);
    expect(sameSettings(base, { ...base, models: { planner: '' } })).toBe(true);
    expect(sameSettings(base, { ...base, approvalMode: 'ask_risky' }), 'ask_risky is the default').toBe(true);
    expect(sameSettings(base, { ...base, theme: 'system' }), 'system is the default').toBe(true);
    expect(sameSettings(base, { ...base, worldMemoryMiB: 0 }), 'an unset memory limit is the default').toBe(true);
    expect(sameSettings(base, { ...base, taskSteps: 'workers' }), "the team's workers are the default").toBe(true);
  });

  it('sees each real change', () => {
    expect(sameSettings(base, { ...base, ollamaHost: '127.0.0.1:11500' })).toBe(false);
    expect(sameSettings(base, { ...base, models: { critic: 'llama3.2:3b' } })).toBe(false);
    expect(sameSettings(base, { ...base, approvalMode: 'ask_every' })).toBe(false);
    expect(sameSettings(base, { ...base, theme: 'dark' })).toBe(false);
    expect(sameSettings(base, { ...base, worldMemoryMiB: 1024 })).toBe(false);
    expect(sameSettings(base, { ...base, taskSteps: 'here' })).toBe(false);
  });
});

describe('normal', () => {
  it('trims and drops roles left to the router', () => {
    expect(normal({ ...base, ollamaHost: ' gpu:1 ', models: { planner: ' a ', coder: '' } })).toEqual({
      ...base,
      ollamaHost: 'gpu:1',
      models: { planner: 'a' },
    });
  });

  it('keeps task steps here, and leaves the default unsaid', () => {
    expect(normal({ ...base, taskSteps: 'here' })).toEqual({ ...base, taskSteps: 'here' });
    expect(normal({ ...base, taskSteps: 'workers' })).not.toHaveProperty('taskSteps');
  });

  it('sends a memory limit only when one is set', () => {
    expect(normal({ ...base, worldMemoryMiB: 0 })).not.toHaveProperty('worldMemoryMiB');
    expect(normal({ ...base, worldMemoryMiB: 2048 })).toEqual({ ...base, worldMemoryMiB: 2048 });
  });
});

describe('byField', () => {
  it('keeps the first problem of each field', () => {
    expect(
      byField([
        { field: 'ollamaHost', message: 'one' },
        { field: 'ollamaHost', message: 'two' },
        { field: 'models.coder', message: 'three' },
      ]),
    ).toEqual({ ollamaHost: 'one', 'models.coder': 'three' });
  });
});
