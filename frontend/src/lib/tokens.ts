// Streamed model text while a planner or coder thinks. Tokens are not stored
// by the backend (the final message is), so the run view keeps a bounded
// tail per stream: the planner ("") and each coder step.
import type { Token } from '../bridge/types';

/** TokenStreams maps a step id ("" for the planner) to its text so far. */
export type TokenStreams = Readonly<Record<string, string>>;

/** TOKEN_TAIL bounds each stream's kept text. */
export const TOKEN_TAIL = 6000;

/** appendTokens adds the tokens of runId to streams; it returns streams itself when none are for this run. */
export function appendTokens(streams: TokenStreams, batch: readonly Token[], runId: string, tail = TOKEN_TAIL): TokenStreams {
  let out: Record<string, string> | undefined;
  for (const t of batch) {
    if (t.runId !== runId || t.text === '') continue;
    out ??= { ...streams };
    const key = t.stepId ?? '';
    const text = (out[key] ?? '') + t.text;
    out[key] = text.length > tail ? text.slice(text.length - tail) : text;
  }
  return out ?? streams;
}
