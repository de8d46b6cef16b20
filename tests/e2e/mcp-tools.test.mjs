// A journey through Settings → Tools: add an MCP server by its command (a
// small fake server, tests/mcp/testdata/fakeserver, started in the sandbox),
// see it ready with its tools and the tool it left out, mark a tool safe,
// test it, run a task whose plan calls that tool (it runs without asking in
// the risky mode) and find its answer in the run view, see a bad server's
// sentence, and remove the server.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { appReady, go, journey, screenshot, startStack } from './harness.mjs';

describe('Settings → Tools', { timeout: 180_000 }, () => {
  let stack;
  let fake;
  before(async () => {
    fake = path.join(await mkdtemp(path.join(tmpdir(), 'ducklm-e2e-mcp-')), 'fakeserver');
    execFileSync('go', ['build', '-o', fake, './tests/mcp/testdata/fakeserver'], { cwd: path.resolve(import.meta.dirname, '../..') });
    stack = await startStack();
  });
  after(async () => {
    await stack?.stop();
  });

  it('adds a server, marks a tool safe, runs a plan calling it and removes the server', async () => {
    await journey(stack, 'mcp-tools', async (page) => {
      await appReady(page);
      await go(stack, page, '#/settings');
      const tools = page.getByRole('region', { name: 'Tools' });
      await tools.getByTestId('mcp-empty').waitFor();

      const form = tools.getByRole('form', { name: 'Add an MCP server' });
      await form.getByRole('textbox', { name: 'Name', exact: true }).fill('fake');
      await form.getByRole('textbox', { name: 'Command', exact: true }).fill(fake);
      await form.getByRole('textbox', { name: /^Arguments/ }).fill('ok');
      await form.getByRole('button', { name: 'Add server' }).click();
      const server = tools.getByRole('listitem', { name: 'fake' });
      await server.getByText('Added fake: 7 tools.').waitFor();
      await server.getByText('ready', { exact: true }).waitFor();
      await server.getByText('Runs in the sandbox, writes only a folder of its own, no network.').waitFor();
      await server.getByText(/tool broken was left out: its input schema cannot be used/).waitFor();

      await server.getByRole('checkbox', { name: 'echo is safe' }).check();
      await server.getByText('echo runs without asking in the risky mode.').waitFor();
      await server.getByRole('button', { name: 'Test' }).click();
      await server.getByText('fake started and listed 7 tools.').waitFor();

      // A server that prints garbage is kept with its sentence.
      await form.getByRole('textbox', { name: 'Name', exact: true }).fill('chatty');
      await form.getByRole('textbox', { name: 'Command', exact: true }).fill(fake);
      await form.getByRole('textbox', { name: /^Arguments/ }).fill('garbage');
      await form.getByRole('button', { name: 'Add server' }).click();
      const chatty = tools.getByRole('listitem', { name: 'chatty' });
      await chatty.getByText(/MCP server chatty did not start: it did not speak MCP on its standard output/).first().waitFor();
      await tools.scrollIntoViewIfNeeded();
      await screenshot(page, 'mcp-tools-servers');

      const plan = JSON.stringify({ nodes: [{ id: 'hello', kind: 'tool', tool: 'mcp__fake__echo', args: { message: 'quack from MCP' } }] });
      const run = await stack.call('SubmitTask', { task: 'say quack', plan, approvalMode: 'ask_risky' });
      await stack.waitFor('the run completes', 'RunDetail', [run.id], (d) => d.run.status === 'completed' || d.approvals?.length > 0);
      const detail = await stack.call('RunDetail', run.id);
      assert.equal(detail.run.status, 'completed', 'echo was marked safe, so nothing asked');
      await go(stack, page, `#/runs/${run.id}`);
      await page.getByTestId('stdout').getByText('quack from MCP').waitFor();

      await go(stack, page, '#/settings');
      for (const name of ['chatty', 'fake']) {
        const row = tools.getByRole('listitem', { name });
        await row.getByRole('button', { name: 'Remove…' }).click();
        await row.getByRole('group', { name: `Confirm removing ${name}` }).getByRole('button', { name: 'Remove' }).click();
        await row.waitFor({ state: 'detached' });
      }
      await tools.getByTestId('mcp-empty').waitFor();
      const catalog = await stack.call('ToolCatalog');
      assert.ok(!catalog.some((t) => t.name.startsWith('mcp__')), 'the removed server’s tools left the catalog');
    });
  });
});
