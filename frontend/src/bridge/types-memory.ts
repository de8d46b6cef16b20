// Memory (Go: memory, service, api).
// Part of the bridge's types: see types.ts for how they are written.
import type { Reality } from './types-core';
import type { ModelInfo } from './types-runs';

/** MemoryType is what kind of thing a memory records (Go: memorypolicy.Type). */
export type MemoryType = 'fact' | 'observation' | 'procedure' | 'hypothesis' | 'preference';

/** MemoryProvenance says where a memory came from (Go: memory.Provenance). */
export interface MemoryProvenance {
  runId?: string;
  /** The event that holds the content (a step.finished event). */
  eventId?: string;
  reality: Reality;
  /** The simulated world of a world-local hypothesis. */
  worldId?: string;
  /** For what a server answered (web_fetch, browser): the URL that answered… */
  url?: string;
  /** …and when. */
  observedAt?: string;
}

/** Memory is one stored memory (Go: memory.Memory). Its text is already redacted. */
export interface Memory {
  id: string;
  text: string;
  type: MemoryType;
  embeddingModel: string;
  contentHash: string;
  provenance: MemoryProvenance;
  weight: number;
  mergedCount: number;
  createdAt: string;
  mergedAt?: string;
  updatedAt: string;
}

/** RetrievedMemory is one search result (Go: memory.Retrieved). */
export interface RetrievedMemory {
  id: string;
  text: string;
  type: MemoryType;
  provenance: MemoryProvenance;
  weight: number;
  mergedCount: number;
  createdAt: string;
  mergedAt?: string;
  /** Cosine similarity to the query, -1 to 1. */
  similarity: number;
  embeddingModel: string;
}

/** MemoryFilter narrows a search or a listing; "" does not filter (Go: api.MemoryFilter). */
export interface MemoryFilter {
  type: MemoryType | '';
  reality: Reality | '';
  runId: string;
}

/** MemorySearch is a semantic search (Go: api.MemorySearch). */
export interface MemorySearch extends MemoryFilter {
  query: string;
  /** 1 to 100; 0 means 20. */
  k: number;
}

/** MemoryListInput asks for one page, newest first (Go: api.MemoryListInput). */
export interface MemoryListInput extends MemoryFilter {
  /** 0 means 50. */
  limit: number;
  /** The previous page's next; "" is the first page. */
  before: string;
}

/** MemoryPage is one page of memories (Go: memory.Page). */
export interface MemoryPage {
  memories: Memory[];
  /** The cursor of the next page; "" on the last one. */
  next: string;
}

/** MemorySource is one provenance merged into a memory, placed in the ledger (Go: service.MemorySource). */
export interface MemorySource extends MemoryProvenance {
  criticScore: number;
  worth: number;
  addedAt: string;
  /** Where the source event sits; seq is absent when the event is not in this ledger. */
  stream?: string;
  seq?: number;
  eventType?: string;
  /** The task step whose result it was. */
  step?: string;
}

/** MemoryDetail is a memory with every provenance (Go: service.MemoryDetail). */
export interface MemoryDetail {
  memory: Memory;
  dimensions: number;
  sources: MemorySource[];
}

/** ReindexProgress is the state of the latest re-embedding (Go: memory.Progress). */
export interface ReindexProgress {
  model: string;
  done: number;
  total: number;
  running: boolean;
  error?: string;
}

/** MemoryStatus is the memory screen's header (Go: api.MemoryStatus). */
export interface MemoryStatus {
  /** Every memory, whichever model embedded it. */
  memories: number;
  /** The embedding model in service. */
  model: string;
  builtin: boolean;
  /** Memories in the index of model. */
  indexed: number;
  /** Memories not yet embedded with model. */
  stale: number;
  /** "snapshot" or "database". */
  loadedFrom: string;
  /** Go time.Duration: nanoseconds. */
  loadTimeNs: number;
  reindex?: ReindexProgress;
  /** The settings' embedder, when one is set. */
  preferred?: string;
}

/** EmbedderChoices are the models a re-embedding can use (Go: api.EmbedderChoices). */
export interface EmbedderChoices {
  current: string;
  builtin: string;
  preferred?: string;
  ollama: ModelInfo;
  /** Ollama models whose names say they embed. */
  embedding: string[];
}

/** ReindexInput starts a re-embedding (Go: api.ReindexInput). */
export interface ReindexInput {
  /** An Ollama model or the built-in one; "" means the settings' embedder, else a repair. */
  model: string;
  /** The id progress reports carry. */
  op: string;
}

/** ReindexResult is what a re-embedding did (Go: service.ReindexResult). */
export interface ReindexResult {
  model: string;
  previous: string;
  reembedded: number;
  indexed: number;
  /** Go time.Duration: nanoseconds. */
  tookNs: number;
  settingsSaved: boolean;
}
