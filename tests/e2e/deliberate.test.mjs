// Journeys through deliberation: from a Branching Grid world, search forks
// of it before acting, see the ranked candidates with the best two side by
// side, apply the best; and cancel a long search while it runs.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { go, journey, screenshot, startStack } from './harness.mjs';

describe('Deliberation', { timeout: 150_000 }, () => {
  let stack;
  let run;
  before(async () => {
    stack = await startStack();
    const created = await stack.call('CreateWorld', { name: 'grid', example: 'branching_grid', program: '', seed: 3 });
    run = created.run.id;
  });
  after(async () => {
    await stack?.stop();
  });

  it('deliberates, compares the best two candidates and applies the best', async () => {
    await journey(stack, 'deliberate-apply', async (page) => {
      await go(stack, page, `#/worlds/${encodeURIComponent(run)}`);
      await page.getByTestId('grid-view').waitFor();
      await page.getByRole('button', { name: 'Deliberate…' }).click();
      const dialog = page.getByRole('dialog', { name: 'Deliberate' });
      await dialog.waitFor();
      await dialog.getByLabel('Depth').fill('4');
      await dialog.getByLabel('Budget').fill('60');
      await dialog.getByRole('button', { name: 'Deliberate', exact: true }).click();
      const cands = dialog.getByRole('region', { name: 'Candidates' });
      await cands.waitFor({ timeout: 30_000 });
      assert.match(await dialog.getByTestId('round-summary').textContent(), /^Round 1 at time 0: \d+ of 60 branches/);
      await cands.getByRole('article', { name: 'Candidate 1' }).getByTestId('grid-view').waitFor();
      await cands.getByRole('article', { name: 'Candidate 2' }).getByTestId('grid-view').waitFor();

      await screenshot(page, 'deliberate-candidates');
      const apply = dialog.getByRole('button', { name: /^Apply best: / });
      const chosen = (await apply.textContent()).replace('Apply best: ', '');
      await apply.click();
      await dialog.waitFor({ state: 'detached' });
      await page.getByText('world time 1', { exact: true }).waitFor();
      await page.getByText("Applied the deliberation's choice: world time 1.").waitFor();

      const rounds = await stack.call('Deliberations', run);
      assert.equal(rounds.length, 1);
      assert.equal(JSON.stringify(rounds[0].chosen), chosen);
      const used = rounds[0].budget.used;
      assert.ok(used > 0 && used <= 60, `branches used: ${used}`);
      // Every branch is a world forked from this one or from another branch.
      const page1 = await stack.call('ListWorlds', { limit: 500 });
      assert.equal(page1.total, 1 + used);

      // The world view keeps the round: what it spent and what it chose,
      // opening to its candidates.
      const panel = page.getByRole('region', { name: 'Deliberations' });
      const head = panel.getByRole('button', { name: /^Round 1 at t=0/ });
      await head.waitFor();
      // What it spent, why it stopped, what it chose (with the score's scale), and whether the world took it.
      assert.match(
        await head.textContent(),
        new RegExp(`beam, ${used} of 60 branches \\([^)]+\\): chose ${chosen.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}, score -?[\\d.]+ \\(higher is better`),
      );
      // Issue 30, confusing 3: an applied round says the world took its choice.
      assert.ok(rounds[0].appliedAt > 0, `the round records where the world took its choice: ${JSON.stringify(rounds[0].appliedAt)}`);
      await head.getByTestId('round-applied').filter({ hasText: /^applied: the world took .+ \(t=\d+\)$/ }).waitFor({ timeout: 10_000 });
      await head.click();
      await panel.getByRole('article', { name: 'Candidate 1' }).waitFor();
      // Its forks hide the branches, and say how many.
      const forks = page.getByRole('region', { name: 'Forks of this world' });
      await forks.getByTestId('fork-branches-note').filter({ hasText: /^\d+ deliberation branch(es are| is) not listed\. List them too$/ }).waitFor();
      // The Worlds list shows the grid alone, and the branches when asked.
      await go(stack, page, '#/worlds');
      const list = page.getByRole('region', { name: 'Simulated worlds' });
      await list.getByTestId('world-count').filter({ hasText: '1 world' }).waitFor();
      const note = list.getByTestId('branches-note');
      assert.match(await note.textContent(), /^\d+ deliberation branch(es are| is) not listed\./);
      await note.getByRole('button', { name: 'List them too' }).click();
      await list.getByTestId('world-count').filter({ hasText: new RegExp(`^(100 of )?${(1 + used).toLocaleString('en')} worlds`) }).waitFor();
      await list.getByText(/^branch, round 1$/).first().waitFor();
      // The timeline says why the world took its step: the round chose it.
      await go(stack, page, `#/timeline/${encodeURIComponent(run)}?world=1`);
      const step = page.getByTestId('timeline-row').filter({ hasText: 'world.step' });
      await step.getByText('round 1', { exact: true }).waitFor();
      await step.click();
      const cause = page.getByRole('complementary', { name: 'Event' }).getByTestId('cause');
      assert.match(await cause.textContent(), /^deliberation round 1 at t=0 — beam, \d+ of 60 branches \([^)]+\): chose /);
      assert.deepEqual(page.problems, []);
    });
  });

  it('cancels a long search while it runs', async () => {
    await journey(stack, 'deliberate-cancel', async (page) => {
      await go(stack, page, `#/worlds/${encodeURIComponent(run)}`);
      await page.getByRole('button', { name: 'Deliberate…' }).click();
      const dialog = page.getByRole('dialog', { name: 'Deliberate' });
      await dialog.getByText('Tree search (MCTS)').click();
      assert.equal(await dialog.getByLabel('Beam width').count(), 0, 'a tree search has no width');
      await dialog.getByLabel('Depth').fill('20');
      await dialog.getByLabel('Budget').fill('100000');
      await dialog.getByRole('button', { name: 'Deliberate', exact: true }).click();
      await dialog.getByTestId('deliberation-progress').filter({ hasText: /[1-9][\d,]* of 100000 branches/ }).waitFor({ timeout: 30_000 });
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      // A search the user cancelled says so as a status, not as an error.
      const cancelled = dialog.getByRole('status', { name: 'Cancelled' });
      await cancelled.waitFor({ timeout: 30_000 });
      assert.match(await cancelled.textContent(), /^The deliberation was cancelled after 0 finished rounds; the branches it recorded stay/);
      assert.equal(await dialog.getByRole('alert').count(), 0);
      assert.equal((await stack.call('Deliberations', run)).length, 1, 'the cancelled round has no record');
      await dialog.getByRole('button', { name: 'Close' }).click();
      await dialog.waitFor({ state: 'detached' });
      // The cancelled call answers with what it kept, not as a failed request (it was a 422).
      assert.deepEqual(page.problems, []);
    });
  });
  it('draws the search in the lineage: scores as colour, the chosen line, the older round folded', async () => {
    await journey(stack, 'deliberate-lineage', async (page) => {
      // A second recorded round from where the first left the world.
      await stack.call('Deliberate', { runId: run, checkpointId: '', strategy: 'beam', width: 2, depth: 3, budget: 30, seeds: 1, rounds: 1, untilDone: false, apply: false, timeLimitMs: 0, op: '' });
      await go(stack, page, '#/lineage');
      const legend = page.getByTestId('score-legend');
      await legend.waitFor({ timeout: 30_000 });
      await legend.getByRole('img', { name: '5 steps from lower to higher score' }).waitFor();
      const unfold = legend.getByRole('button', { name: 'Unfold 1 older round' });
      await unfold.waitFor();
      const graph = page.getByRole('group', { name: 'Lineage graph' });
      await graph.locator('[aria-label$=", on the chosen line"]').first().waitFor({ timeout: 30_000 });
      // Issue 30, broken 2: the cancelled search's branches (recorded, its round not) start folded,
      // not drawn as hundreds of unscored boxes beside the rounds.
      const stopped = legend.getByRole('button', { name: /^Unfold [\d,]+ unscored branch(es)?$/ });
      await stopped.waitFor();
      assert.ok(Number((await stopped.textContent()).match(/[\d,]+/)[0].replace(/,/g, '')) > 0);
      const drawn = await graph.getByRole('button').count();
      await stopped.click();
      await legend.getByRole('button', { name: 'Fold the unscored branches' }).waitFor();
      await page.waitForFunction((n) => document.querySelectorAll('[aria-label="Lineage graph"] [role="button"]').length > n, drawn);
      await legend.getByRole('button', { name: 'Fold the unscored branches' }).click();
      await page.waitForFunction((n) => document.querySelectorAll('[aria-label="Lineage graph"] [role="button"]').length === n, drawn);
      const folded = await graph.getByRole('button').count();
      await unfold.click();
      await legend.getByRole('button', { name: 'Fold older rounds' }).waitFor();
      await page.waitForFunction((n) => document.querySelectorAll('[aria-label="Lineage graph"] [role="button"]').length > n, folded);
      await screenshot(page, 'deliberate-lineage');
      assert.deepEqual(page.problems, []);
    });
  });
});
