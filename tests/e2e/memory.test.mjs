// Journey: task runs write memories (each step's scored result passes the
// write policy: the fake critic scores 0.9); on the Memory screen a person
// searches them by meaning, opens one's provenance and follows it to the
// timeline, deletes one after confirming, and re-embeds them all with an
// Ollama embedding model while the progress shows. A later run's memory is
// written with the new model: the running app switched, not just the screen.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { go, journey, shellPlan, startStack } from './harness.mjs';

const FACTS = [
  { task: 'find the port nginx listens on', echo: 'nginx listens on port 8080 on every interface' },
  { task: 'find where postgres keeps its data', echo: 'postgres keeps its data in /var/lib/postgresql/16/main' },
  { task: 'find when the backup runs', echo: 'the nightly backup runs at 03:00 from cron' },
];

describe('Memory', { timeout: 180_000 }, () => {
  let stack;
  before(async () => {
    stack = await startStack();
    // The page records every progress report the server streams to it.
    await stack.context.addInitScript(() => {
      window.__progress = [];
      const add = EventSource.prototype.addEventListener;
      EventSource.prototype.addEventListener = function (type, fn, opts) {
        if (type === 'work:progress') add.call(this, type, (e) => window.__progress.push(...JSON.parse(e.data)), opts);
        return add.call(this, type, fn, opts);
      };
    });
  });
  after(async () => {
    await stack?.stop();
  });

  /** remember runs a one-step shell task to completion; its result becomes a memory. */
  async function remember({ task, echo }) {
    const run = await stack.call('SubmitTask', { task, plan: shellPlan(`echo ${echo}`), approvalMode: 'auto_sandboxed' });
    await stack.waitFor(`the run for "${task}" completes`, 'RunDetail', [run.id], (d) => d.run.status === 'completed');
    return run.id;
  }

  it('searches memories, shows provenance, deletes one and re-embeds them with progress', async () => {
    const runs = [];
    for (const f of FACTS) runs.push(await remember(f));
    const listed = await stack.waitFor('three memories are written', 'ListMemories', [{ limit: 0, before: '' }], (p) => p.memories.length === 3);
    assert.ok(listed.memories.every((m) => m.type === 'observation' && m.provenance.reality === 'external_real'));

    await journey(stack, 'memory', async (page) => {
      await go(stack, page, '#/memory');
      await page.getByRole('heading', { name: 'Memory', exact: true }).waitFor();
      assert.equal(await page.getByTestId('memory-count').textContent(), '3');
      assert.equal(await page.getByTestId('memory-model').textContent(), 'ducklm-hash-384');
      const rows = page.getByTestId('memory-row');
      await rows.nth(2).waitFor();
      assert.match(await rows.first().textContent(), /backup/, 'newest first');

      // Search by meaning.
      await page.getByRole('searchbox', { name: 'Search memories' }).fill('which port does nginx listen on');
      await page.getByRole('button', { name: 'Search', exact: true }).click();
      await page.getByText(/Most similar to “which port does nginx listen on” first/).waitFor();
      await page.waitForFunction(() => /nginx/.test(document.querySelector('[data-testid="memory-row"]')?.textContent ?? ''));
      const top = rows.first();
      assert.match(await top.locator('.score').textContent(), /^0\.\d\d$/);
      assert.equal(await top.getByText('Real', { exact: true }).count(), 1);

      // Provenance: the run and the timeline at the step's event.
      await top.click();
      const detail = page.getByRole('region', { name: 'Memory detail' });
      await detail.getByTestId('memory-text').waitFor();
      assert.match(await detail.getByTestId('memory-text').textContent(), /nginx listens on port 8080/);
      const source = detail.getByTestId('memory-source').first();
      const runLink = source.getByRole('link', { name: /^run_/ });
      assert.equal(await runLink.getAttribute('href'), `#/runs/${runs[0]}`);
      const tl = source.getByRole('link', { name: /step\.finished #\d+ in the timeline/ });
      const tlHref = await tl.getAttribute('href');
      assert.match(tlHref, new RegExp(`^#/timeline/${runs[0]}\\?seq=\\d+$`));
      await tl.click();
      await page.waitForURL((u) => u.hash === tlHref);
      await page.getByTestId('timeline-row').first().waitFor();
      await page.goBack();
      await page.getByRole('heading', { name: 'Memory', exact: true }).waitFor();

      // Delete, after a confirmation.
      await page.getByRole('searchbox', { name: 'Search memories' }).fill('postgres data directory');
      await page.getByRole('button', { name: 'Search', exact: true }).click();
      await page.waitForFunction(() => /postgres/.test(document.querySelector('[data-testid="memory-row"]')?.textContent ?? ''));
      await rows.first().click();
      await detail.getByText(/postgres keeps its data/).first().waitFor();
      await detail.getByRole('button', { name: 'Delete…' }).click();
      await detail.getByRole('group', { name: 'Confirm deletion' }).waitFor();
      await detail.getByRole('button', { name: 'Delete memory' }).click();
      await page.getByText('The memory was deleted.').waitFor();
      await page.waitForFunction(() => document.querySelector('[data-testid="memory-count"]')?.textContent === '2');
      await page.getByRole('button', { name: 'Clear' }).click();
      await page.waitForFunction(() => document.querySelectorAll('[data-testid="memory-row"]').length === 2);
      const left = await stack.call('ListMemories', { limit: 0, before: '' });
      assert.equal(left.memories.length, 2);
      assert.ok(!left.memories.some((m) => /postgres/.test(m.text)));

      // Re-embed with the Ollama embedding model, progress shown live.
      await page.getByRole('button', { name: 'Change embedding model…' }).click();
      const model = page.getByRole('combobox', { name: 'Embedding model' });
      await model.waitFor();
      await model.selectOption('nomic-embed-text:latest');
      await page.getByRole('button', { name: 'Re-embed with nomic-embed-text:latest' }).click();
      const done = page.getByTestId('reindex-done');
      await done.waitFor({ timeout: 30_000 });
      assert.match(await done.textContent(), /^Re-embedded 2 memories with nomic-embed-text:latest in .+ Searches now use nomic-embed-text:latest instead of ducklm-hash-384\./);
      await page.waitForFunction(() => document.querySelector('[data-testid="memory-model"]')?.textContent === 'nomic-embed-text:latest');
      // Progress is batched (150 ms) and may arrive after the answer of a quick re-embedding.
      await page.waitForFunction(() => window.__progress.some((p) => p.op.startsWith('reindex-') && p.phase === 're-embedding' && p.done === p.total));
      const progress = await page.evaluate(() => window.__progress.filter((p) => p.op.startsWith('reindex-')));
      assert.ok(progress.length > 0, 'the page received progress reports');
      const last = progress.at(-1);
      assert.deepEqual([last.phase, last.done, last.total, last.unit], ['re-embedding', 2, 2, 'memories']);

      // The running app writes with the new model at once.
      await remember({ task: 'find the kernel version', echo: 'the kernel is Linux 6.12' });
      const after = await stack.waitFor('the new memory is written', 'ListMemories', [{ limit: 0, before: '' }], (p) => p.memories.length === 3);
      assert.equal(after.memories[0].embeddingModel, 'nomic-embed-text:latest');

      // What a person sees: a search with the new model, one memory open.
      // (The fake model's vectors carry no meaning, so nginx need not rank first.)
      await page.getByRole('searchbox', { name: 'Search memories' }).fill('nginx port');
      await page.getByRole('button', { name: 'Search', exact: true }).click();
      await page.getByText(/Most similar to “nginx port” first/).waitFor();
      await page.waitForFunction(() => document.querySelectorAll('[data-testid="memory-row"]').length === 3);
      await rows.filter({ hasText: 'nginx listens' }).click();
      await detail.getByTestId('memory-source').first().waitFor();
      assert.match(await detail.textContent(), /nomic-embed-text:latest \(\d+ dimensions\)/);
      assert.deepEqual(page.problems, []);
    });
  });
});
