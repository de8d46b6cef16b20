import { describe, expect, it } from 'vitest';
import { decisionOf, describeDecision } from './decision';

const routerDecision = { type: 'tool', payload: { step: 's0', tool: 'file_read', network: false }, requires_permission: false, confidence: 1, reason: 'Step "s0" is ready, so file_read runs it.' };
const critique = { score: 0.6, explanation: 'The step succeeded but produced no output.', source: 'heuristic' };

describe('decisionOf', () => {
  it('reads the router and critic decisions of runs recorded before steps carried them', () => {
    expect(decisionOf({ type: 'decision.applied', payload: { source: 'router', decision: routerDecision } })).toEqual({
      source: 'router',
      type: 'tool',
      confidence: 1,
      reason: 'Step "s0" is ready, so file_read runs it.',
    });
    const critic = { type: 'noop', payload: { ...critique, model_error: 'no critic model is available' }, requires_permission: false, confidence: 0.6, reason: critique.explanation };
    expect(decisionOf({ type: 'decision.applied', payload: { source: 'critic', decision: critic } })).toEqual({ source: "critic (rule of thumb, not a model's judgement)", type: 'noop', confidence: 0.6, reason: critique.explanation });
    // Before, a start and a critique carried no decision: their own decision.applied events did.
    expect(decisionOf({ type: 'step.started', payload: { step: 's0', attempt: 1, tool: 'file_read' } })).toBeUndefined();
    expect(decisionOf({ type: 'critic.scored', payload: { step: 's0', ...critique } })).toBeUndefined();
  });

  it('reads the router decision inside a step start and the critic decision a critique carries', () => {
    expect(decisionOf({ type: 'step.started', payload: { step: 's0', attempt: 1, tool: 'file_read', decision: routerDecision } })).toEqual({
      source: 'router',
      type: 'tool',
      confidence: 1,
      reason: 'Step "s0" is ready, so file_read runs it.',
    });
    expect(decisionOf({ type: 'critic.scored', payload: { step: 's0', ...critique, modelError: 'no critic model is available', decision: 'noop' } })).toEqual({
      // The heuristic's score is a rule of thumb, and the line says so, as the run view does.
      source: "critic (rule of thumb, not a model's judgement)",
      type: 'noop',
      confidence: 0.6,
      reason: critique.explanation,
    });
  });

  it('reads the critic decision a step result carries with its critique, and says the rule of thumb was used for want of a model', () => {
    const payload = { step: 's0', ok: true, critique: { ...critique, modelError: 'no critic model is available', decision: 'noop' }, checkpointId: 'ckp_1' };
    expect(decisionOf({ type: 'step.finished', payload })).toEqual({
      source: "critic (rule of thumb, not a model's judgement)",
      type: 'noop',
      confidence: 0.6,
      reason: `${critique.explanation} The critic model was not used (no critic model is available).`,
    });
    const judged = { step: 's0', ok: true, critique: { score: 0.7, explanation: 'Lists the files.', source: 'model', model: 'qwen3:8b', decision: 'noop' } };
    expect(decisionOf({ type: 'step.finished', payload: judged })).toEqual({ source: 'critic', type: 'noop', confidence: 0.7, reason: 'Lists the files.' });
    // A result whose critique came later (a slow critic) carries none.
    expect(decisionOf({ type: 'step.finished', payload: { step: 's0', ok: true, critique: 'nonsense' } })).toBeUndefined();
  });

  it("calls a model's critique the critic's", () => {
    const judged = { step: 's0', score: 0.7, explanation: 'Lists the files.', source: 'model', model: 'qwen3:8b', decision: 'noop' };
    expect(decisionOf({ type: 'critic.scored', payload: judged })?.source).toBe('critic');
  });

  it('reads nothing from other events or malformed payloads', () => {
    expect(decisionOf({ type: 'step.finished', payload: { step: 's0', ok: true } })).toBeUndefined();
    expect(decisionOf({ type: 'decision.applied', payload: null })).toBeUndefined();
    expect(decisionOf({ type: 'decision.applied', payload: { source: 'router', decision: { reason: 'no type' } } })).toBeUndefined();
    expect(decisionOf({ type: 'step.started', payload: [1, 2] })).toBeUndefined();
  });

  it('says a decision in one line', () => {
    expect(describeDecision({ source: 'critic', type: 'noop', confidence: 0.6, reason: 'fine' })).toBe('critic: noop (confidence 0.6) — fine');
    expect(describeDecision({ source: 'router', type: 'complete', confidence: 1, reason: '' })).toBe('router: complete (confidence 1)');
  });
});
