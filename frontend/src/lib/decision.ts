// A task run records each decision the loop applied in one of three ways
// (Go: runtime.DecisionOf): a decision.applied event of its own (the planner's,
// the router's that start no step, and every decision of runs recorded before
// the other two existed), inside the step.started event it led to (the
// router's), or as a critic.scored event whose "decision" is set (the critic's:
// a noop whose confidence is the score and whose reason is the explanation) —
// today inside the step.finished event it scores, as its "critique".

/** AppliedDecision is one decision a run's event records. */
export interface AppliedDecision {
  /** Who decided: router, planner or critic. */
  source: string;
  type: string;
  confidence: number;
  reason: string;
}

function record(v: unknown): Record<string, unknown> | undefined {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

const RULE_OF_THUMB = "critic (rule of thumb, not a model's judgement)";

function decisionFrom(source: string, v: unknown, ruleOfThumb = false): AppliedDecision | undefined {
  const d = record(v);
  if (!d || typeof d.type !== 'string') return undefined;
  return { source: ruleOfThumb && source === 'critic' ? RULE_OF_THUMB : source, type: d.type, confidence: typeof d.confidence === 'number' ? d.confidence : 0, reason: typeof d.reason === 'string' ? d.reason : '' };
}

/** decisionOf returns the decision an event records, in any of the formats runs have recorded it in. */
export function decisionOf(e: { type: string; payload: unknown }): AppliedDecision | undefined {
  const p = record(e.payload);
  if (!p) return undefined;
  switch (e.type) {
    case 'decision.applied':
      // An old run's critic decision carries the critique: a rule of thumb's says so.
      return decisionFrom(typeof p.source === 'string' ? p.source : '', p.decision, record(record(p.decision)?.payload)?.source === 'heuristic');
    case 'step.started':
      return decisionFrom('router', p.decision);
    case 'critic.scored':
      return critiqueDecision(p);
    case 'step.finished': {
      // The critique recorded with its result leaves out the rule of thumb's note, which its model error gives.
      const c = record(p.critique);
      const d = c && critiqueDecision(c);
      if (d && typeof c?.modelError === 'string' && c.modelError !== '') d.reason += ` The critic model was not used (${c.modelError}).`;
      return d;
    }
    default:
      return undefined;
  }
}

function critiqueDecision(p: Record<string, unknown>): AppliedDecision | undefined {
  if (typeof p.decision !== 'string' || p.decision === '') return undefined;
  const score = typeof p.score === 'number' ? Math.min(Math.max(p.score, 0), 1) : 0;
  // The rule of thumb that scores a step when no critic model is available says so, as the run view does.
  const source = p.source === 'heuristic' ? RULE_OF_THUMB : 'critic';
  return { source, type: p.decision, confidence: score, reason: typeof p.explanation === 'string' ? p.explanation : '' };
}

/** describeDecision says a decision in one line: "router: tool (confidence 1) — why". */
export function describeDecision(d: AppliedDecision): string {
  const head = `${d.source || 'decision'}: ${d.type} (confidence ${Number(d.confidence.toFixed(2))})`;
  return d.reason ? `${head} — ${d.reason}` : head;
}
