// The delta editor's knowledge of divergences: which apply to which domain,
// a starting delta for each, and the shape checks the backend makes
// (backend/world/fork.go parseDelta), run as the user types.
import type { DivergenceType, Domain, SeedPolicy } from '../bridge/types';

export interface DivergenceOption {
  id: DivergenceType;
  label: string;
  hint: string;
  template: string;
}

const SIMULATED: DivergenceOption[] = [
  {
    id: 'state_patch',
    label: 'State patch',
    hint: 'A JSON merge patch applied to the state at the checkpoint.',
    template: '{\n  "pos": [0, 4]\n}',
  },
  {
    id: 'parameter_change',
    label: 'Parameter change',
    hint: 'New values for existing scalars in state["params"] (or the top level).',
    template: '{\n  "params": { "noise": 0.05 }\n}',
  },
  {
    id: 'action_override',
    label: 'Action override',
    hint: 'Actions the child applies first, before the program chooses again.',
    template: '{\n  "actions": ["E", "E", "S"]\n}',
  },
  {
    id: 'seed_change',
    label: 'Seed change',
    hint: 'Reseed the RNG: {} with the derive or fresh policy, or {"seed": N}.',
    template: '{}',
  },
  {
    id: 'program_change',
    label: 'Program change',
    hint: 'Replace the world program: {"program": "<Starlark source>"}.',
    template: '{\n  "program": ""\n}',
  },
];

const REAL: DivergenceOption[] = [
  {
    id: 'plan_edit',
    label: 'Plan edit',
    hint: 'The edited plan the child run resumes with.',
    template: '{\n  "nodes": []\n}',
  },
];

/** divergencesFor lists the divergences a world of domain can fork by. */
export function divergencesFor(domain: Domain): DivergenceOption[] {
  return domain === 'real' ? REAL : SIMULATED;
}

export const SEED_POLICIES: readonly { id: SeedPolicy; label: string; hint: string }[] = [
  { id: 'inherit', label: 'Inherit', hint: "The parent's seed and RNG state continue." },
  { id: 'derive', label: 'Derive', hint: "A seed derived from the parent's seed and the fork id." },
  { id: 'fresh', label: 'Fresh', hint: 'A new random seed.' },
];

/** checkDelta says what is wrong with a delta, or undefined when the backend should accept its shape. */
export function checkDelta(kind: DivergenceType, text: string, policy: SeedPolicy): string | undefined {
  const src = text.trim() === '' ? '{}' : text;
  let v: unknown;
  try {
    v = JSON.parse(src);
  } catch (e) {
    return `The delta is not valid JSON: ${e instanceof Error ? e.message : String(e)}`;
  }
  const isObject = v !== null && typeof v === 'object' && !Array.isArray(v);
  const o = (isObject ? v : {}) as Record<string, unknown>;
  switch (kind) {
    case 'state_patch':
    case 'parameter_change':
      return isObject ? undefined : `A ${kind} delta is a JSON object (a merge patch of the state).`;
    case 'action_override':
      return isObject && Array.isArray(o.actions) && o.actions.length > 0
        ? undefined
        : 'An action_override delta is {"actions": [...]} with at least one action.';
    case 'program_change':
      return isObject && typeof o.program === 'string' && o.program !== ''
        ? undefined
        : 'A program_change delta is {"program": "<Starlark source>"}.';
    case 'seed_change': {
      if (isObject && o.seed !== undefined && (!Number.isInteger(o.seed) || (o.seed as number) < 0)) {
        return 'A seed is a whole number from 0 to 2^63-1.';
      }
      if (policy === 'inherit' && o.seed === undefined) {
        return 'A seed_change needs the seed policy derive or fresh, or an explicit {"seed": N}.';
      }
      return undefined;
    }
    case 'plan_edit':
      return isObject ? undefined : 'A plan_edit delta is the edited plan, a JSON object.';
  }
}

/** CHANGE_MAX is how much of a fork's delta a one-line summary shows (the whole in its tooltip). */
const CHANGE_MAX = 60;

/**
 * forkChange says in one line what a fork changed: its delta as compact
 * JSON (cut to CHANGE_MAX characters), and the seed policy when it is not
 * inherit. The Lineage says the same from the outline's brief.
 */
export function forkChange(delta: unknown, seedPolicy: SeedPolicy): string {
  const empty = delta === null || delta === undefined || (typeof delta === 'object' && !Array.isArray(delta) && Object.keys(delta).length === 0);
  const seed = seedPolicy && seedPolicy !== 'inherit' ? `seed ${seedPolicy}` : '';
  if (empty) return seed ? `only the seed · ${seed}` : 'nothing in its state (an empty delta)';
  const json = JSON.stringify(delta);
  const text = json.length > CHANGE_MAX ? `${json.slice(0, CHANGE_MAX)}…` : json;
  return seed ? `${text} · ${seed}` : text;
}
