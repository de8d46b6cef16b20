// A real MCP client — the official TypeScript SDK's Client over stdio — that
// starts `ducklm mcp serve`, lists its tools and calls them. mcp_test.go runs
// it (node client.mjs BIN) with DUCKLM_HOME set and checks what it printed:
// one JSON object on its last line.
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';

const bin = process.argv[2];
if (!bin) throw new Error('usage: node client.mjs DUCKLM_BIN');

const transport = new StdioClientTransport({ command: bin, args: ['mcp', 'serve'], env: { ...process.env }, stderr: 'inherit' });
const client = new Client({ name: 'ts-sdk-client', version: '1.0.0' });
await client.connect(transport);

const out = { server: client.getServerVersion(), instructions: client.getInstructions() };
const { tools } = await client.listTools();
out.tools = tools.map((t) => t.name).sort();
for (const t of tools) {
  assert.equal(t.inputSchema.type, 'object', `${t.name} takes an object`);
  assert.ok(t.outputSchema, `${t.name} declares its output`);
}

async function call(name, args) {
  const res = await client.callTool({ name, arguments: args });
  assert.ok(!res.isError, `${name} failed: ${JSON.stringify(res.content)}`);
  assert.ok(res.structuredContent, `${name} answers structured content`);
  return res.structuredContent;
}

const world = await call('create_world', { example: 'branching_grid', name: 'from the TypeScript SDK', seed: 3 });
const stepped = await call('run_world', { runId: world.runId, steps: 4 });
assert.equal(stepped.time, 4);
const fork = await call('fork_world', { runId: world.runId, divergence: 'seed_change', seedPolicy: 'fresh' });
const diff = await call('diff_runs', { runA: world.runId, runB: fork.runId });
assert.ok(diff.diff.sharedEvents > 0);
const resource = await client.readResource({ uri: `ducklm://world/${world.worldId}` });
assert.equal(resource.contents[0].mimeType, 'application/json');
const task = await call('submit_task', { task: '$ echo hello from MCP' });
const status = await call('run_status', { runId: task.runId });
const runs = await call('list_runs', {});

// A bad argument is the tool's error, in a sentence.
const bad = await client.callTool({ name: 'run_status', arguments: { runId: 'nope' } });
assert.equal(bad.isError, true);

// A deliberation sends progress; aborting the call cancels it on the server.
const abort = new AbortController();
let progress = 0;
const long = client
  .callTool({ name: 'deliberate', arguments: { runId: world.runId, strategy: 'mcts', depth: 20, budget: 100000, seeds: 16 } }, CallToolResultSchema, {
    signal: abort.signal,
    onprogress: (p) => {
      progress++;
      if (progress === 2) abort.abort('enough');
    },
    timeout: 60000,
  })
  .then(
    () => 'answered',
    (e) => `rejected: ${e.message ?? e}`,
  );
out.deliberation = await long;
out.progress = progress;

await client.close();
Object.assign(out, { world, fork, task, status, runs: runs.runs.length, badError: bad.content[0].text });
console.log(JSON.stringify(out));
