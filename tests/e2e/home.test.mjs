// Journey: the Home screen in a browser served by `ducklm serve` — where the
// data is, how much the ledger holds, and events appearing live when a run
// is submitted through the HTTP API.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { appReady, journey, shellPlan, startStack } from './harness.mjs';

describe('Home', { timeout: 90_000 }, () => {
  let stack;
  before(async () => {
    stack = await startStack();
  });
  after(async () => {
    const results = await stack?.stop();
    // ducklm serve stops cleanly on SIGTERM (exit 0, data directory released).
    if (results) assert.deepEqual(results.at(0), { code: 0, signal: null }, 'ducklm serve exit');
  });

  it('shows the data directory and the counts, then live events of a submitted run', async () => {
    await journey(stack, 'home-live-events', async (page) => {
      await appReady(page);
      const location = page.getByRole('region', { name: 'Data location' });
      await location.getByText(stack.home, { exact: true }).first().waitFor();
      assert.equal(await page.getByTestId('count-task-runs').textContent(), '0');
      assert.equal(await page.getByTestId('count-events').textContent(), '0');
      await page.getByText('No events yet').waitFor();

      // Submit a run as another client would, from the page's own origin
      // with the page's token: its events reach the page through the stream.
      const run = await page.evaluate(
        async ({ plan }) => {
          const token = new URL(location.href).searchParams.get('token');
          const res = await fetch('/api/call/SubmitTask', {
            method: 'POST',
            headers: { 'Content-Type': 'application/json', 'X-Ducklm-Token': token },
            body: JSON.stringify([{ task: 'say hello from the e2e journey', plan, approvalMode: 'auto_sandboxed' }]),
          });
          const body = await res.json();
          if (!res.ok) throw new Error(body.error);
          return body;
        },
        { plan: shellPlan('echo hello from e2e', 'say hello') },
      );
      assert.match(run.id, /^run_/);

      const rows = page.getByTestId('event-row');
      await rows.filter({ hasText: 'task.received' }).first().waitFor();
      await rows.filter({ hasText: 'plan.accepted' }).first().waitFor();
      // Every event of the run is shown once (the stream and the first page
      // are deduplicated on stream and seq).
      const settled = await stack.waitFor('the run parks or ends', 'RunDetail', [run.id], (d) =>
        ['completed', 'failed', 'awaiting_approval'].includes(d.run.status),
      );
      const { counts } = await stack.call('Overview');
      await page.waitForFunction(
        (n) => document.querySelectorAll('[data-testid="event-row"]').length >= n,
        Math.min(counts.events, 50),
      );
      await page.waitForFunction(
        (n) => Number(document.querySelector('[data-testid="count-events"]')?.textContent?.replace(/\D/g, '')) >= n,
        counts.events,
      );
      const keys = await rows.evaluateAll((trs) => trs.map((tr) => `${tr.children[1].title}|${tr.children[2].textContent}`));
      assert.equal(new Set(keys).size, keys.length, 'no event is shown twice');
      const kinds = await rows.locator('td:nth-child(4)').allTextContents();
      assert.ok(kinds.includes(settled.run.status === 'completed' ? 'run.completed' : 'run.status'), kinds.join(', '));
      assert.deepEqual(page.problems, []);
    });
  });

  it('keeps working after a reload (the token is kept for the tab)', async () => {
    await journey(stack, 'home-after-reload', async (page) => {
      await appReady(page); // opened with the token, which the tab keeps
      await page.goto(stack.base); // no token in the address: the tab's stored one is used
      await page.getByRole('region', { name: 'Data location' }).waitFor();
      await page.getByTestId('event-row').first().waitFor();
      assert.equal(await page.getByTestId('count-task-runs').textContent(), '1');
    });
  });
});
