import { describe, expect, it } from 'vitest';
import type { EmbedderChoices, MemoryStatus } from '../bridge/types';
import { countText, defaultEmbedder, embedderOptions, indexText, progressText, realityBadge, sentence, similarity, PHASE_CHECK, PHASE_EMBED } from './format';

const choices = (over: Partial<EmbedderChoices> = {}): EmbedderChoices => ({
  current: 'ducklm-hash-384',
  builtin: 'ducklm-hash-384',
  ollama: { host: 'http://127.0.0.1:11434', reachable: true, models: ['qwen2.5:7b', 'nomic-embed-text:latest'], sandboxed: true },
  embedding: ['nomic-embed-text:latest'],
  ...over,
});

describe('memory words', () => {
  it('labels real facts apart from hypotheses of simulated worlds', () => {
    expect(realityBadge({ reality: 'external_real' }).label).toBe('Real');
    const sim = realityBadge({ reality: 'world_local', worldId: 'wld_1' });
    expect(sim.label).toBe('Simulated');
    expect(sim.title).toContain('wld_1');
    expect(sim.title).toContain('never counts as a fact');
  });

  it('counts, rounds and ends sentences', () => {
    expect(countText(1)).toBe('1 memory');
    expect(countText(1200)).toBe('1,200 memories');
    expect(similarity(0.83456)).toBe('0.83');
    expect(similarity(Number.NaN)).toBe('—');
    expect(sentence('Ollama is not reachable')).toBe('Ollama is not reachable.');
    expect(sentence('done.')).toBe('done.');
  });

  it('says where the index came from', () => {
    const s = { indexed: 12, loadedFrom: 'snapshot' } as MemoryStatus;
    expect(indexText(s, '4 ms')).toBe('12 indexed, loaded from its snapshot in 4 ms');
    expect(indexText({ ...s, loadedFrom: 'database' }, '4 ms')).toContain('rebuilt from the database');
    expect(indexText({ ...s, reindex: { model: 'm', done: 2, total: 2, running: false }, model: 'm' }, '4 ms')).toBe('12 indexed, built by the re-embedding');
    expect(indexText({ ...s, reindex: { model: 'm', done: 0, total: 2, running: false, error: 'x' }, model: 'h' }, '4 ms')).toContain('snapshot');
  });

  it('says how far a re-embedding has come', () => {
    expect(progressText({ phase: PHASE_CHECK, done: 0, total: 0 }, 'nomic-embed-text')).toContain('Ollama may be loading it');
    expect(progressText({ phase: PHASE_EMBED, done: 64, total: 200 }, 'm')).toBe('Re-embedded 64 of 200 memories with m');
    expect(progressText({ phase: PHASE_EMBED, done: 0, total: 0 }, 'm')).toContain('Nothing to re-embed');
  });

  it('offers the built-in embedder, then Ollama embedding models, then the rest', () => {
    const opts = embedderOptions(choices());
    expect(opts.map((o) => [o.group, o.value])).toEqual([
      ['Built-in', 'ducklm-hash-384'],
      ['Ollama embedding models', 'nomic-embed-text:latest'],
      ['Other Ollama models', 'qwen2.5:7b'],
    ]);
    expect(opts[0]?.label).toBe('Built-in: ducklm-hash-384 (in use)');
  });

  it('proposes the settings embedder, else an Ollama embedding model, else the built-in one', () => {
    expect(defaultEmbedder(choices({ preferred: 'mxbai-embed-large' }))).toBe('mxbai-embed-large');
    expect(defaultEmbedder(choices())).toBe('nomic-embed-text:latest');
    expect(defaultEmbedder(choices({ current: 'nomic-embed-text', preferred: 'nomic-embed-text' }))).toBe('ducklm-hash-384');
  });
});
