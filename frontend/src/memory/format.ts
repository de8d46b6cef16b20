// What the memory screen says about memories, provenance and re-embedding:
// pure functions, so the words are tested apart from the components.
import type { EmbedderChoices, MemoryProvenance, MemoryStatus, MemoryType, Progress, Reality } from '../bridge/types';

/** The phases the backend reports while re-embedding (Go: service.PhaseReindex*). */
export const PHASE_CHECK = 'checking the model';
export const PHASE_EMBED = 're-embedding';

export const MEMORY_TYPES: MemoryType[] = ['fact', 'observation', 'procedure', 'hypothesis', 'preference'];

/** realityBadge is the label and explanation of where a memory's content happened. */
export function realityBadge(p: MemoryProvenance): { label: string; title: string; reality: Reality } {
  if (p.reality === 'world_local') {
    const world = p.worldId ? ` ${p.worldId}` : '';
    return {
      label: 'Simulated',
      title: `A hypothesis from simulated world${world}: it never counts as a fact of this machine (world_local).`,
      reality: 'world_local',
    };
  }
  return { label: 'Real', title: 'Recorded from something that happened on this machine (external_real).', reality: 'external_real' };
}

/** similarity renders a cosine similarity for the results list. */
export function similarity(n: number): string {
  return Number.isFinite(n) ? n.toFixed(2) : '—';
}

/** countText says "1 memory" or "3 memories". */
export function countText(n: number): string {
  return `${n.toLocaleString('en')} ${n === 1 ? 'memory' : 'memories'}`;
}

/** indexText says where the vector index of the model in service came from. */
export function indexText(s: MemoryStatus, took: string): string {
  const r = s.reindex;
  if (r && !r.running && !r.error && r.model === s.model) return `${s.indexed.toLocaleString('en')} indexed, built by the re-embedding`;
  const from = s.loadedFrom === 'snapshot' ? 'loaded from its snapshot' : 'rebuilt from the database';
  return `${s.indexed.toLocaleString('en')} indexed, ${from} in ${took}`;
}

/** progressText says how far a re-embedding has come. */
export function progressText(p: Pick<Progress, 'phase' | 'done' | 'total'>, model: string): string {
  if (p.phase === PHASE_CHECK) return `Asking ${model} for a first vector (Ollama may be loading it)…`;
  if (p.total === 0) return 'Nothing to re-embed: switching the index…';
  return `Re-embedded ${p.done.toLocaleString('en')} of ${countText(p.total)} with ${model}`;
}

/** EmbedderOption is one choice of the re-embed form. */
export interface EmbedderOption {
  value: string;
  label: string;
  group: 'Built-in' | 'Ollama embedding models' | 'Other Ollama models';
}

function sameModel(a: string, b: string): boolean {
  const strip = (s: string) => s.toLowerCase().replace(/:latest$/, '');
  return strip(a) === strip(b);
}

/**
 * embedderOptions lists the built-in embedder, then Ollama's embedding
 * models, then its other models (which may not embed: the backend refuses
 * one that cannot before anything changes). The model in service is marked.
 */
export function embedderOptions(c: EmbedderChoices): EmbedderOption[] {
  const mark = (name: string) => (sameModel(name, c.current) ? ' (in use)' : '');
  const out: EmbedderOption[] = [
    { value: c.builtin, label: `Built-in: ${c.builtin}${mark(c.builtin)}`, group: 'Built-in' },
  ];
  for (const m of c.embedding) out.push({ value: m, label: `${m}${mark(m)}`, group: 'Ollama embedding models' });
  for (const m of c.ollama.models) {
    if (!c.embedding.includes(m)) out.push({ value: m, label: `${m}${mark(m)}`, group: 'Other Ollama models' });
  }
  return out;
}

/**
 * defaultEmbedder picks what the form offers first: the settings' embedder
 * when it is not the one in use, else the first Ollama embedding model not
 * in use, else the built-in one.
 */
export function defaultEmbedder(c: EmbedderChoices): string {
  if (c.preferred && !sameModel(c.preferred, c.current)) return c.preferred;
  return c.embedding.find((m) => !sameModel(m, c.current)) ?? c.builtin;
}

/** isCurrent says whether model is the one in service. */
export function isCurrent(model: string, current: string): boolean {
  return sameModel(model, current);
}

/** newOp returns an id to follow one piece of work's progress by. */
export function newOp(): string {
  return `reindex-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
}

export { sentence } from '../lib/format';
