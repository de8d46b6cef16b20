// The settings form's pure parts: what each role and approval mode means,
// which models fit a role, and whether the form differs from what is stored.
import type { ApprovalMode, ModelRole, Settings, SettingsProblem } from '../bridge/types';

/** The roles in the order the form shows them, with what each model does. */
export const ROLES: readonly { id: ModelRole; label: string; hint: string }[] = [
  { id: 'planner', label: 'Planner', hint: 'Turns a task into a plan of steps.' },
  { id: 'coder', label: 'Coder', hint: 'Writes the helper scripts a plan asks for.' },
  { id: 'critic', label: 'Critic', hint: 'Scores each finished step.' },
  { id: 'embedder', label: 'Embedder', hint: 'Embeds memories for search; used when you re-embed them on the Memory screen.' },
];

/** The approval modes, with one line on what each asks (backend/router/permission.go). */
export const MODES: readonly { id: ApprovalMode; label: string; hint: string }[] = [
  { id: 'ask_risky', label: 'Ask for risky steps', hint: 'Medium and high risk steps wait for you; low risk steps run.' },
  { id: 'ask_every', label: 'Ask for every step', hint: 'Nothing runs until you approve it.' },
  {
    id: 'auto_sandboxed',
    label: 'Run sandboxed steps',
    hint: 'Only high risk steps wait, or every step when there is no sandbox.',
  },
];

/** The approval mode ducklm uses when none is set (runtime.normalise). */
export const DEFAULT_MODE: ApprovalMode = 'ask_risky';

/** The built-in embedder's name (memory.HashModel): works without Ollama. */
export const BUILTIN_EMBEDDER = 'ducklm-hash-384';

/** isEmbedding says whether a model name looks like an embedding model (router.isEmbedding). */
export function isEmbedding(name: string): boolean {
  const base = name.slice(name.lastIndexOf('/') + 1).toLowerCase();
  return base.includes('embed') || base.includes('minilm') || base.startsWith('bge');
}

/** sameModel compares names as the router does: case aside, and ":latest" aside. */
export function sameModel(a: string, b: string): boolean {
  const strip = (s: string) => s.replace(/:latest$/i, '').toLowerCase();
  return strip(a) === strip(b);
}

/** RoleModels are a role's choices from what Ollama lists. */
export interface RoleModels {
  /** The models that fit the role, in Ollama's order. */
  fit: string[];
  /** The other models Ollama lists (the router picks them only when you choose them). */
  other: string[];
  /** The chosen model when Ollama does not list it. */
  missing?: string;
}

/**
 * roleModels sorts Ollama's models for a role: embedding models fit the
 * embedder, the others the chat roles. The router never gives a chat role an
 * embedding model, so those are left out of chat roles altogether; a chat
 * model may embed when chosen, so the embedder lists them apart.
 */
export function roleModels(role: ModelRole, available: readonly string[], chosen: string): RoleModels {
  const embedder = role === 'embedder';
  const fit = available.filter((m) => isEmbedding(m) === embedder);
  const other = embedder ? available.filter((m) => !isEmbedding(m)) : [];
  const listed = chosen === '' || available.some((m) => sameModel(m, chosen)) || (embedder && chosen.startsWith('ducklm-hash-'));
  return listed ? { fit, other } : { fit, other, missing: chosen };
}

/** normal is settings as the backend stores them, to compare forms. */
export function normal(s: Settings): Settings {
  const models: Settings['models'] = {};
  for (const [role, m] of Object.entries(s.models) as [ModelRole, string | undefined][]) {
    const v = (m ?? '').trim();
    if (v !== '') models[role] = v;
  }
  const hosts = (s.allowedHosts ?? []).map((h) => h.trim()).filter((h) => h !== '');
  const out: Settings = { ollamaHost: s.ollamaHost.trim(), models, approvalMode: s.approvalMode, theme: s.theme, ...(hosts.length > 0 ? { allowedHosts: hosts } : {}) };
  if (s.worldMemoryMiB) out.worldMemoryMiB = s.worldMemoryMiB;
  if (s.taskSteps === 'here') out.taskSteps = 'here';
  if (s.maxReviews) out.maxReviews = s.maxReviews;
  if (s.criticThreshold) out.criticThreshold = s.criticThreshold;
  return out;
}

/** The memory limit of world programs when none is set, and the range one may choose (settings.go). */
export const WORLD_MEMORY = { default: 512, min: 64, max: 65536 } as const;

/** How a run closes its loop when nothing is set, and what a setting may choose (settings.go, runtime). */
export const RUN_LOOP = { reviews: 4, maxReviews: 20, threshold: 0.5 } as const;

/** sameSettings says whether saving a would change nothing stored as b. */
export function sameSettings(a: Settings, b: Settings): boolean {
  const x = normal(a);
  const y = normal(b);
  const roles = new Set([...Object.keys(x.models), ...Object.keys(y.models)]) as Set<ModelRole>;
  return (
    x.ollamaHost === y.ollamaHost &&
    (x.approvalMode || DEFAULT_MODE) === (y.approvalMode || DEFAULT_MODE) &&
    (x.theme || 'system') === (y.theme || 'system') &&
    (x.worldMemoryMiB || 0) === (y.worldMemoryMiB || 0) &&
    (x.taskSteps ?? 'workers') === (y.taskSteps ?? 'workers') &&
    (x.maxReviews || 0) === (y.maxReviews || 0) &&
    (x.criticThreshold || 0) === (y.criticThreshold || 0) &&
    [...roles].every((r) => x.models[r] === y.models[r]) &&
    (x.allowedHosts ?? []).join('\n') === (y.allowedHosts ?? []).join('\n')
  );
}

/** byField indexes problems by their field ("ollamaHost", "models.planner", ...). */
export function byField(problems: readonly SettingsProblem[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of problems) out[p.field] ??= p.message;
  return out;
}
