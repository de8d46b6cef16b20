// Journey: a natural-language task deliberates. The fake model plans one
// world_search step for "walk the branching grid" (ollama-script.json); the
// search runs in the task's own simulated world, the router turns its chosen
// line into move steps, and the run view offers "Deliberate…" on the search
// step's world.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { go, journey, screenshot, startStack } from './harness.mjs';

describe('A task that deliberates', { timeout: 150_000 }, () => {
  let stack;
  before(async () => {
    stack = await startStack();
  });
  after(async () => {
    await stack?.stop();
  });

  it("takes the search's chosen line, then deliberates again from the run view", async () => {
    await journey(stack, 'task-deliberates', async (page) => {
      const run = await stack.call('SubmitTask', { task: 'walk the branching grid towards its goal', approvalMode: 'auto_sandboxed' });
      const detail = await stack.waitFor('the run ends', 'RunDetail', [run.id], (d) => ['completed', 'failed', 'awaiting_approval'].includes(d.run.status));
      assert.equal(detail.run.status, 'completed', JSON.stringify(detail.state).slice(0, 800));
      const out = detail.state.steps.search.result.output;
      // The grid is noisy, so the best line may stop short of the depth of 4.
      const moves = out.line.length;
      assert.ok(moves >= 1 && moves <= 4, `the line: ${JSON.stringify(out.line)}`);
      for (let i = 1; i <= moves; i++) assert.equal(detail.state.steps[`search-move-${i}`].state, 'done');
      assert.equal(detail.state.steps[`search-move-${moves + 1}`], undefined);

      await go(stack, page, `#/runs/${encodeURIComponent(run.id)}`);
      const graph = page.getByRole('group', { name: 'Task graph' });
      await graph.getByRole('button', { name: 'search the grid: done' }).click();
      const result = page.getByTestId('search-result');
      await result.waitFor();
      assert.match(await result.textContent(), /taken as the steps search-move-1…/);
      const dialog = page.getByRole('dialog', { name: 'Deliberate' });
      // One fresh-clone CI run lost this click (the button took the focus, no dialog came: the
      // step panel was drawn again between press and release, the lead thinks); a user clicks
      // again, and so does the journey, up to three times. Known, to look into.
      for (let i = 0; i < 3 && !(await dialog.isVisible()); i++) {
        await result.getByRole('button', { name: 'Deliberate…' }).click();
        await dialog.waitFor({ timeout: 10_000 }).catch(() => {});
      }
      await dialog.getByLabel('Depth').fill('3');
      await dialog.getByLabel('Budget').fill('30');
      await dialog.getByRole('button', { name: 'Deliberate', exact: true }).click();
      // The second round of the task's world, at the time the moves left it.
      const summary = dialog.getByTestId('round-summary');
      await summary.waitFor({ timeout: 60_000 });
      assert.match(await summary.textContent(), new RegExp(`^Round 2 at time ${moves}: `));
      await screenshot(page, 'task-deliberates');
      await dialog.getByRole('button', { name: 'Close' }).click();
      await dialog.waitFor({ state: 'detached' });
      assert.deepEqual(page.problems, []);
    });
  });
});
