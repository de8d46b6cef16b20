// LangGraph.js's counterparts of the checkpoint operations make bench times
// for ducklm's worlds, on the saver of graph.mjs:
//   fork     graph.updateState at a past checkpoint (step 25) of a 50-step
//            thread: a new checkpoint branching from it, committed and synced
//   history  graph.getStateHistory of that thread, read to its end (52 states)
//   list     saver.list of a thread of 1,000 checkpoints, beside the 50-step one
// Each is timed ITERATIONS times after one untimed run; the means, on one
// line in the shape of a Go benchmark's:
//   langgraph-ops iterations=20 X ms/fork Y ms/history Z ms/list
import { open } from "./graph.mjs";

const iterations = Number(process.env.ITERATIONS ?? 20);
if (!(Number.isInteger(iterations) && iterations >= 1)) {
  throw new Error(`ITERATIONS must be an integer >= 1 (got ${process.env.ITERATIONS})`);
}

const { graph, saver, run, close } = open();
// mean times op once untimed, then `iterations` times; check, untimed, is
// given the first and the last result.
async function mean(op, check) {
  await check(await op());
  let last;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) last = await op();
  const ms = Number(process.hrtime.bigint() - t0) / 1e6 / iterations;
  await check(last);
  return ms;
}
async function collect(iterable) {
  const all = [];
  for await (const x of iterable) all.push(x);
  return all;
}

try {
  const short = { configurable: { thread_id: "short" } };
  const long = { configurable: { thread_id: "long" } };
  await run("short", 50);
  await run("long", 998); // the input's checkpoint, the start's and one a step: 1,000

  const count = (want, what) => (all) => {
    if (all.length !== want) throw new Error(`${what}: ${all.length}, not ${want}`);
  };
  const list = await mean(() => collect(saver.list(long)), count(1000, "checkpoints listed"));
  const history = await mean(() => collect(graph.getStateHistory(short)), count(52, "states in a 50-step thread's history"));
  // Last: every fork adds a checkpoint to the thread.
  const past = (await collect(graph.getStateHistory(short))).find((s) => s.metadata.step === 25);
  const fork = await mean(
    () => graph.updateState(past.config, { n: 100 }),
    async (child) => {
      const state = await graph.getState(child);
      if (state.values.n !== 100 || state.parentConfig?.configurable.checkpoint_id !== past.config.configurable.checkpoint_id) {
        throw new Error("the fork is not a child of step 25's checkpoint with n=100");
      }
    },
  );
  console.log(`langgraph-ops iterations=${iterations} ${fork.toFixed(3)} ms/fork ${history.toFixed(3)} ms/history ${list.toFixed(3)} ms/list`);
} finally {
  close();
}
