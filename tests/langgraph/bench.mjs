// LangGraph.js's trivial durable step, measured as ducklm's loop benchmark
// (backend/runtime BenchmarkLoopTrivialStep) measures its own: a chain of
// STEPS steps and a one-step run on one saver, in turn, ROUNDS times; the
// net per step is (T(STEPS) - T(1)) / (STEPS - 1), so the fixed part of a
// run (the input's checkpoint, the graph's start and end) is taken out.
// The graph and its saver: graph.mjs. One line on stdout, in the shape of a
// Go benchmark's:
//   langgraph steps=50 rounds=3 X ms/step Y ms/step-net
// scripts/bench.sh task runs this between rounds of the Go benchmark.
import { open } from "./graph.mjs";

const steps = Number(process.env.STEPS ?? 50);
const rounds = Number(process.env.ROUNDS ?? 3);
if (!(Number.isInteger(steps) && steps >= 2 && Number.isInteger(rounds) && rounds >= 1)) {
  throw new Error(`STEPS must be an integer >= 2 and ROUNDS >= 1 (got ${process.env.STEPS}, ${process.env.ROUNDS})`);
}

const { run, close } = open();
try {
  let thread = 0;
  await run(`t${thread++}`, 2); // warm up: the statements, the file's first pages
  let loop = 0, fixed = 0;
  for (let i = 0; i < rounds; i++) {
    loop += await run(`t${thread++}`, steps);
    fixed += await run(`t${thread++}`, 1);
  }
  loop /= rounds;
  fixed /= rounds;
  const net = (loop - fixed) / (steps - 1);
  console.log(`langgraph steps=${steps} rounds=${rounds} ${(loop / steps).toFixed(4)} ms/step ${net.toFixed(4)} ms/step-net`);
} finally {
  close();
}
