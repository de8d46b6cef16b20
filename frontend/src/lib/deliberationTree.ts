// A deliberation drawn in the lineage: its branches are forks under the
// world that deliberated, coloured by score within their round, with the
// round's chosen line marked and older rounds folded away. Pure: the
// lineage's layout never depends on it.
import type { DeliberationRound } from '../bridge/types';
import type { LineageModel } from './lineage';

/** SCORE_TONES is how many steps the score scale has (CSS --score-0 … --score-4). */
export const SCORE_TONES = 5;

/** LARGE_ROUND is how many branches a latest round draws whole; a larger one starts folded to its chosen line. */
export const LARGE_ROUND = 200;

/**
 * deliberatingWorlds maps each world that deliberated (the parent of a
 * round's first branches) to the run whose rounds to read.
 */
export function deliberatingWorlds(m: LineageModel): Map<string, string> {
  const out = new Map<string, string>();
  for (const n of m.nodes) {
    if (!n.round || !n.parent) continue;
    const p = m.byId.get(n.parent);
    if (!p?.runId || p.round === n.round) continue; // a deeper branch's parent is a branch of the same round
    out.set(p.id, p.runId);
  }
  return out;
}

/** SearchOverlay is what the lineage adds to its drawing for deliberations. */
export interface SearchOverlay {
  /** A branch's score, and its tone 0 (lowest of its round) … SCORE_TONES-1 (highest). */
  score: ReadonlyMap<string, number>;
  tone: ReadonlyMap<string, number>;
  /** The branches along each round's chosen line. */
  chosen: ReadonlySet<string>;
  /** The first branches of every round but the latest of its world: folded by default. */
  olderRounds: ReadonlySet<string>;
  /**
   * In a latest round of more than LARGE_ROUND branches, the branches just
   * off its chosen line (each a subtree): folded by default, so the line
   * and what it was chosen over stay readable; offLineBranches counts those
   * rounds' branches.
   */
  offLine: ReadonlySet<string>;
  offLineBranches: number;
  /**
   * The first branches whose subtree no recorded round scored: a search
   * records its round (with every branch's score) when it finishes, so
   * these belong to one cancelled before that, or still running (or they
   * failed). Folded by default, so a cancelled search's hundreds of
   * unscored boxes do not flood the drawing beside the rounds that were
   * recorded; unrecordedBranches counts them with their subtrees.
   */
  unrecorded: ReadonlySet<string>;
  unrecordedBranches: number;
  /** How many rounds are drawn. */
  rounds: number;
}

/** searchOverlay reads the rounds of each deliberating world (by world id) onto the lineage. */
export function searchOverlay(m: LineageModel, roundsByWorld: ReadonlyMap<string, readonly DeliberationRound[]>): SearchOverlay {
  const score = new Map<string, number>();
  const tone = new Map<string, number>();
  const chosen = new Set<string>();
  const olderRounds = new Set<string>();
  const offLine = new Set<string>();
  const unrecorded = new Set<string>();
  let offLineBranches = 0;
  let unrecordedBranches = 0;
  let count = 0;
  for (const [worldId, rounds] of roundsByWorld) {
    // A cancelled search may share its index with the next round, so a
    // branch is known by its score, not by its index: one whose subtree no
    // recorded round scored is unrecorded.
    const scored = new Set(rounds.flatMap((r) => Object.keys(r.scores ?? {})));
    for (const c of m.children.get(worldId) ?? []) {
      const idx = m.byId.get(c)?.round;
      if (!idx) continue;
      const subtree = subtreeOfRound(m, c, idx);
      if (!subtree.some((id) => scored.has(id))) {
        unrecorded.add(c);
        unrecordedBranches += subtree.length;
      }
    }
    if (rounds.length === 0) continue;
    const latest = Math.max(...rounds.map((r) => r.deliberationIndex));
    for (const r of rounds) {
      count++;
      const idx = r.deliberationIndex;
      const entries = Object.entries(r.scores ?? {}).filter(([w, s]) => m.byId.has(w) && Number.isFinite(s));
      const values = entries.map(([, s]) => s);
      const lo = Math.min(...values);
      const hi = Math.max(...values);
      for (const [w, s] of entries) {
        score.set(w, s);
        tone.set(w, hi === lo ? SCORE_TONES - 1 : Math.round(((s - lo) / (hi - lo)) * (SCORE_TONES - 1)));
      }
      // The chosen line: from the end of the chosen action's best line up to the world that deliberated.
      const line: string[] = [];
      for (let cur = r.candidates[0]?.bestBranches?.[0]; cur && cur !== worldId; ) {
        const n = m.byId.get(cur);
        if (!n || n.round !== idx) break;
        chosen.add(cur);
        line.push(cur);
        cur = n.parent;
      }
      if (idx < latest) {
        for (const c of m.children.get(worldId) ?? []) if (m.byId.get(c)?.round === idx) olderRounds.add(c);
      } else if (r.budget.used > LARGE_ROUND && line.length > 0) {
        // Along the line, from the world that deliberated down: every
        // branch of this round beside it folds its subtree.
        const onLine = new Set(line);
        let folded = false;
        for (const at of [worldId, ...line]) {
          for (const c of m.children.get(at) ?? []) {
            if (!onLine.has(c) && m.byId.get(c)?.round === idx) {
              offLine.add(c);
              folded = true;
            }
          }
        }
        if (folded) offLineBranches += r.budget.used;
      }
    }
  }
  return { score, tone, chosen, olderRounds, offLine, offLineBranches, unrecorded, unrecordedBranches, rounds: count };
}

/** subtreeOfRound lists the branches of round idx from id down. */
function subtreeOfRound(m: LineageModel, id: string, idx: number): string[] {
  const out: string[] = [];
  const stack = [id];
  while (stack.length > 0) {
    const at = stack.pop()!;
    if (m.byId.get(at)?.round !== idx) continue;
    out.push(at);
    stack.push(...(m.children.get(at) ?? []));
  }
  return out;
}

/** EMPTY_OVERLAY is a lineage without deliberations. */
export const EMPTY_OVERLAY: SearchOverlay = {
  score: new Map(),
  tone: new Map(),
  chosen: new Set(),
  olderRounds: new Set(),
  offLine: new Set(),
  offLineBranches: 0,
  unrecorded: new Set(),
  unrecordedBranches: 0,
  rounds: 0,
};
