// Journey: a run's timeline, filtered to one event type.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { go, journey, shellPlan, startStack } from './harness.mjs';

describe('Timeline', { timeout: 90_000 }, () => {
  let stack;
  before(async () => {
    stack = await startStack();
  });
  after(async () => {
    await stack?.stop();
  });

  it('lists a run history and filters it by event type', async () => {
    const run = await stack.call('SubmitTask', {
      task: 'two greetings',
      plan: JSON.stringify({
        nodes: [
          JSON.parse(shellPlan('echo one', 'first')).nodes[0],
          { ...JSON.parse(shellPlan('echo two', 'second')).nodes[0], id: 'step-2', depends_on: ['step-1'] },
        ],
      }),
      approvalMode: 'auto_sandboxed',
    });
    const detail = await stack.waitFor('the run completes', 'RunDetail', [run.id], (d) => d.run.status === 'completed');

    await journey(stack, 'timeline-filter', async (page) => {
      await go(stack, page, `#/timeline/${encodeURIComponent(run.id)}`);
      const rows = page.getByTestId('timeline-row');
      await rows.first().waitFor();
      await rows.filter({ hasText: 'run.completed' }).first().waitFor();

      await page.getByLabel('Event type').selectOption('step.finished');
      await page.getByText('2 of', { exact: false }).first().waitFor();
      const types = await rows.evaluateAll((rs) => rs.map((r) => r.querySelector('[title]:nth-child(4)')?.getAttribute('title')));
      assert.deepEqual(types, ['step.finished', 'step.finished']);
      assert.equal(detail.run.status, 'completed');
      assert.deepEqual(page.problems, []);
    });
  });

  it('searches a long history as it streams: the first matches, Find more, and the end', async () => {
    // A world of 3,000 steps: a step and an event each (6,000+ events), a milestone every 500.
    const program = [
      'def init(seed):',
      '    return {"n": 0}',
      '',
      'def step(state, action, rng):',
      '    n = state["n"] + 1',
      '    if n % 500 == 0:',
      '        return {"n": n}, [{"tick": n, "note": "milestone"}]',
      '    return {"n": n}, [{"tick": n}]',
      '',
      'def observe(state, role):',
      '    return state',
    ].join('\n');
    const created = await stack.call('CreateWorld', { name: 'ticks', program, example: '', seed: 1 });
    await stack.call('RunWorld', { runId: created.run.id, action: '', steps: 3000, checkpointEvery: 0 });

    await journey(stack, 'timeline-search', async (page) => {
      await go(stack, page, `#/timeline/${encodeURIComponent(created.run.id)}`);
      await page.getByTestId('timeline-row').first().waitFor();
      const search = page.getByRole('searchbox', { name: 'Search events' });
      const status = page.getByTestId('search-status');

      // Dense: every step matches; the search waits after its first batch with Find more.
      await search.fill('world.step');
      await search.press('Enter');
      const more = page.getByRole('button', { name: 'Find more' });
      await more.waitFor({ timeout: 30_000 });
      assert.match(await status.textContent(), /^500 matches in the first [\d,]+ of [\d,]+ events$/);
      assert.match(await page.getByTestId('timeline-row').first().textContent(), /world\.step/, 'the oldest match first');
      // Stop: the next call is held in flight (the route answers only when let go), Stop
      // ends the search where it is and says so, and Find more goes on after it.
      let letGo;
      const held = new Promise((resolve) => (letGo = resolve));
      await page.route('**/api/call/SearchHistory', async (route) => {
        await held;
        await route.continue();
      });
      await more.click();
      const stop = page.getByRole('button', { name: 'Stop' });
      await stop.waitFor({ timeout: 30_000 });
      await stop.click();
      await page.getByText(/^Stopped: 500 matches in the first [\d,]+ of [\d,]+ events$/).waitFor({ timeout: 30_000 });
      letGo();
      // The call that was under way when the user stopped still lands, and the search stays stopped.
      await page.waitForFunction(() => {
        const m = /^Stopped: ([\d,]+) matches in the first [\d,]+ of [\d,]+ events$/.exec(document.querySelector('[data-testid="search-status"]')?.textContent ?? '');
        return m !== null && Number(m[1].replace(/,/g, '')) > 500;
      }, null, { timeout: 30_000 });
      await page.unroute('**/api/call/SearchHistory');
      assert.equal(await stop.count(), 0, 'a stopped search offers no Stop');
      await more.waitFor({ timeout: 30_000 });
      // Find more goes on, batch by batch, to the end.
      for (let i = 0; i < 10 && (await more.isVisible()); i++) {
        const before = await status.textContent();
        await more.click();
        await page.waitForFunction((b) => document.querySelector('[data-testid="search-status"]')?.textContent !== b, before, { timeout: 30_000 });
        await page.waitForFunction(() => !document.querySelector('.search-progress'), null, { timeout: 30_000 });
      }
      await page.getByText(/^3,000 of [\d,]+ events match$/).waitFor({ timeout: 30_000 });

      // Sparse: the whole history is searched at once, and every match is shown.
      await search.fill('milestone');
      await search.press('Enter');
      await page.getByText(/^6 of [\d,]+ events match$/).waitFor({ timeout: 30_000 });
      await page.waitForFunction(() => document.querySelectorAll('[data-testid="timeline-row"]').length === 6, null, { timeout: 30_000 });
      assert.equal(await more.count(), 0);
      assert.deepEqual(page.problems, []);
    });
  });
});
