// LangGraph.js's trivial durable step, measured as ducklm's loop benchmark
// (backend/runtime BenchmarkLoopTrivialStep) measures its own: a chain of
// STEPS steps and a one-step run on one saver, in turn, ROUNDS times; the
// net per step is (T(STEPS) - T(1)) / (STEPS - 1), so the fixed part of a
// run (the input's checkpoint, the graph's start and end) is taken out.
//
// The saver is SqliteSaver on a file (it sets WAL) with synchronous=FULL,
// and every run is invoked with durability "sync": each step's checkpoint is
// committed and synced before the next step starts, the guarantee ducklm's
// step gives. One line on stdout, in the shape of a Go benchmark's:
//   langgraph steps=50 rounds=3 X ms/step Y ms/step-net
// scripts/bench.sh task runs this between rounds of the Go benchmark.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { StateGraph, Annotation, START, END } from "@langchain/langgraph";

const steps = Number(process.env.STEPS ?? 50);
const rounds = Number(process.env.ROUNDS ?? 3);
if (!(Number.isInteger(steps) && steps >= 2 && Number.isInteger(rounds) && rounds >= 1)) {
  throw new Error(`STEPS must be an integer >= 2 and ROUNDS >= 1 (got ${process.env.STEPS}, ${process.env.ROUNDS})`);
}

const dir = mkdtempSync(join(tmpdir(), "ducklm-langgraph-"));
const db = new Database(join(dir, "checkpoints.db"));
const saver = new SqliteSaver(db);
saver.setup();
db.pragma("synchronous = FULL");

// One node that loops on itself until it has run `limit` times; its step
// does as little as ducklm's trivial step: reads the state, returns a result.
const State = Annotation.Root({ n: Annotation(), limit: Annotation(), out: Annotation() });
const graph = new StateGraph(State)
  .addNode("step", (s) => ({ n: s.n + 1, out: `read ${s.n}` }))
  .addEdge(START, "step")
  .addConditionalEdges("step", (s) => (s.n >= s.limit ? END : "step"))
  .compile({ checkpointer: saver });

let thread = 0;
// run invokes a fresh thread of `limit` steps and returns its wall time in
// ms. It fails when the run did not take its steps or its last state is not
// in the saver: a figure for fewer steps, or for steps not saved, would flatter.
async function run(limit) {
  const config = { configurable: { thread_id: `t${thread++}` } };
  const t0 = process.hrtime.bigint();
  const r = await graph.invoke({ n: 0, limit }, { ...config, durability: "sync", recursionLimit: limit + 5 });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.n !== limit) throw new Error(`a run of ${limit} steps ran ${r.n}`);
  const saved = await graph.getState(config);
  if (saved.values.n !== limit) throw new Error(`a run of ${limit} steps saved n=${saved.values.n}`);
  return ms;
}

try {
  await run(2); // warm up: the statements, the file's first pages
  let loop = 0, fixed = 0;
  for (let i = 0; i < rounds; i++) {
    loop += await run(steps);
    fixed += await run(1);
  }
  loop /= rounds;
  fixed /= rounds;
  const net = (loop - fixed) / (steps - 1);
  console.log(`langgraph steps=${steps} rounds=${rounds} ${(loop / steps).toFixed(4)} ms/step ${net.toFixed(4)} ms/step-net`);
} finally {
  db.close();
  rmSync(dir, { recursive: true, force: true });
}
