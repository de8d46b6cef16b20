// Journey: a person describes a task in the New task form; the (fake) model
// plans it as one sandboxed shell step, which is medium risk, so the run
// waits for approval; the person approves it on the run's card and the run
// completes.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { appReady, journey, screenshot, startStack } from './harness.mjs';

describe('New task with an approval', { timeout: 120_000 }, () => {
  let stack;
  before(async () => {
    stack = await startStack();
  });
  after(async () => {
    await stack?.stop();
  });

  it('submits a described task, shows the risky step and runs it once approved', async () => {
    await journey(stack, 'new-task-approved', async (page) => {
      await appReady(page);
      await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'New task' }).click();
      await page.getByRole('heading', { name: 'New task' }).waitFor();
      await page.getByRole('textbox', { name: 'Task' }).fill('list the workspace');
      assert.equal(await page.getByRole('radio', { name: /Ask for risky steps/ }).isChecked(), true, 'risky steps ask by default');
      await page.getByRole('button', { name: 'Start run' }).click();

      await page.waitForURL(/#\/runs\/run_/);
      const card = page.getByTestId('approval-card');
      await card.waitFor({ timeout: 30_000 });
      assert.equal((await page.getByTestId('approval-command').textContent()).trim(), 'ls -la');
      assert.match(await card.textContent(), /medium risk/);
      const runId = decodeURIComponent(new URL(page.url()).hash.replace('#/runs/', ''));
      const waiting = await stack.call('RunDetail', runId);
      assert.equal(waiting.run.status, 'awaiting_approval');
      await screenshot(page, 'new-task-approval');

      await card.getByRole('button', { name: 'Approve', exact: true }).click();
      await page.locator('.run-head [data-status="completed"]').waitFor({ timeout: 30_000 });
      await card.waitFor({ state: 'detached' });
      const done = await stack.call('RunDetail', runId);
      assert.equal(done.run.status, 'completed');
      assert.equal(done.state.steps['step-1'].result.ok, true);
      assert.deepEqual(page.problems, []);
    });
  });
});
