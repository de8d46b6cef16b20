// The graph both benchmarks run, on a fresh SqliteSaver: one node that
// loops on itself until it has run `limit` times, doing as little as
// ducklm's trivial step (it reads the state and returns a result). The
// saver's file is in WAL (the saver sets it) with synchronous=FULL, and
// every run is invoked with durability "sync": each step's checkpoint is
// committed and synced before the next step starts, as ducklm's are.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { StateGraph, Annotation, START, END } from "@langchain/langgraph";

// open returns the compiled graph, its saver, run and close (which removes
// the saver's file).
export function open() {
  const dir = mkdtempSync(join(tmpdir(), "ducklm-langgraph-"));
  const db = new Database(join(dir, "checkpoints.db"));
  const saver = new SqliteSaver(db);
  saver.setup();
  db.pragma("synchronous = FULL");
  const State = Annotation.Root({ n: Annotation(), limit: Annotation(), out: Annotation() });
  const graph = new StateGraph(State)
    .addNode("step", (s) => ({ n: s.n + 1, out: `read ${s.n}` }))
    .addEdge(START, "step")
    .addConditionalEdges("step", (s) => (s.n >= s.limit ? END : "step"))
    .compile({ checkpointer: saver });

  // run runs a new thread of `limit` steps and returns its wall time in ms.
  // It fails when the run did not take its steps or its last state is not
  // in the saver: a figure for fewer steps, or for steps not saved, would
  // flatter.
  async function run(threadId, limit) {
    const config = { configurable: { thread_id: threadId } };
    const t0 = process.hrtime.bigint();
    const r = await graph.invoke({ n: 0, limit }, { ...config, durability: "sync", recursionLimit: limit + 5 });
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    if (r.n !== limit) throw new Error(`a run of ${limit} steps ran ${r.n}`);
    const saved = await graph.getState(config);
    if (saved.values.n !== limit) throw new Error(`a run of ${limit} steps saved n=${saved.values.n}`);
    return ms;
  }

  function close() {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return { graph, saver, run, close };
}
