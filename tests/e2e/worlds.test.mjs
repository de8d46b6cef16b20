// Journeys through simulated worlds: run the Branching Grid and see the
// grid, fork it from a checkpoint and find the child in the lineage DAG, and
// compare the two branches. The journeys share one data directory and run
// in order.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { appReady, go, journey, startStack } from './harness.mjs';

/** What a transparent background computes to: what a rule whose var() names no defined token leaves. */
const TRANSPARENT = 'rgba(0, 0, 0, 0)';
const backgroundOf = (locator) => locator.evaluate((el) => getComputedStyle(el).backgroundColor);

describe('Worlds, forks and lineage', { timeout: 150_000 }, () => {
  let stack;
  let parentRun;
  let childRun;
  before(async () => {
    stack = await startStack();
  });
  after(async () => {
    await stack?.stop();
  });

  it('runs the Branching Grid and shows the grid', async () => {
    await journey(stack, 'branching-grid', async (page) => {
      await appReady(page);
      await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Worlds' }).click();
      await page.getByRole('button', { name: 'Open Branching Grid' }).click();
      await page.waitForURL(/#\/worlds\/run_/);
      parentRun = decodeURIComponent(new URL(page.url()).hash.replace('#/worlds/', ''));
      const grid = page.getByTestId('grid-view');
      await grid.waitFor();

      await page.getByLabel('Steps to run').fill('3');
      await page.getByRole('button', { name: 'Run 3 steps' }).click();
      await page.getByText('world time 3').waitFor();
      await page.getByRole('button', { name: 'Checkpoint', exact: true }).click();
      // The list changes: the new checkpoint is marked, by its id (not a state hash).
      const taken = page.locator('.cp-item[aria-current="true"]', { hasText: 't=3' });
      await taken.waitFor();
      assert.match(await taken.textContent(), /ckp_/);
      assert.doesNotMatch(await taken.textContent(), /sha256/);
      // The world checkpoints as it runs: the answer names the one it took, or the one that holds t=3 already.
      await page
        .getByText(/^(Checkpoint ckp_\S+ taken at world time 3|Nothing new to take: the world has not moved since checkpoint ckp_\S+ at world time 3) \(marked below\)\.$/)
        .waitFor();
      // Drawn apart, in the accent (issue 30, broken 1: --accent was defined nowhere and drew nothing).
      assert.notEqual(await backgroundOf(page.locator('.cp-item.cp-last')), TRANSPARENT, 'the checkpoint just taken is drawn apart');
      // The run stands still between batches: idle, here and on Worlds (issue 30, confusing 2: every idle world said running).
      await page.locator('[data-status="idle"]').first().waitFor();
      assert.equal(await page.locator('[data-status="running"]').count(), 0, 'no idle world says running');
      assert.match(await grid.getAttribute('aria-label'), /^Grid \d+ by \d+: agent at/);
      const d = await stack.call('WorldDetail', parentRun);
      assert.equal(d.run.worldLocalTime, 3);
      assert.ok(d.checkpoints.some((c) => c.worldLocalTime === 3));
      assert.deepEqual(page.problems, []);
    });
  });

  it('forks the grid from a checkpoint and shows the child in the lineage DAG', async () => {
    assert.ok(parentRun, 'the Branching Grid journey ran first');
    await journey(stack, 'lineage-fork', async (page) => {
      await go(stack, page, `#/worlds/${encodeURIComponent(parentRun)}`);
      await page.locator('.cp-item', { hasText: 't=3' }).getByRole('button', { name: 'Fork…' }).click();
      const dialog = page.getByRole('dialog', { name: 'Fork from checkpoint' });
      await dialog.waitFor();
      await dialog.getByLabel('Delta JSON').fill('{"pos": [0, 4]}');
      await dialog.getByRole('textbox', { name: /Name of the child/ }).fill('e2e child');
      await dialog.getByRole('button', { name: 'Create child world' }).click();
      await dialog.waitFor({ state: 'detached' });
      await page.getByText('forked by').waitFor();
      // The child's header says what the fork changed, as the Lineage does (issue 30, confusing 9).
      assert.equal(await page.getByTestId('world-fork-change').textContent(), 'changed {"pos":[0,4]}');
      childRun = decodeURIComponent(new URL(page.url()).hash.replace('#/worlds/', ''));
      assert.notEqual(childRun, parentRun);

      await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Lineage' }).click();
      const graph = page.getByRole('group', { name: 'Lineage graph' });
      await graph.waitFor();
      await graph.getByRole('button', { name: /^e2e child, simulated/ }).waitFor();
      await graph.getByRole('button', { name: /^branching_grid, simulated/ }).waitFor();
      await page.getByText('2 worlds, 1 fork').waitFor();
      const lineage = await stack.call('Lineage');
      assert.equal(lineage.edges?.length ?? 0, 1, JSON.stringify(lineage).slice(0, 400));
      assert.deepEqual(page.problems, []);
    });
  });

  it('compares the two branches, at their latest and at a world time the user picks', async () => {
    // The parent goes on past the fork (t=3): its latest state is later than the child's.
    await stack.call('RunWorld', { runId: parentRun, action: '', steps: 2, checkpointEvery: 0 });
    await journey(stack, 'compare-branches', async (page) => {
      await go(stack, page, `#/worlds/${encodeURIComponent(parentRun)}`);
      const forks = page.getByRole('region', { name: 'Forks of this world' });
      await forks.getByRole('checkbox', { name: 'this world' }).check();
      await forks.getByRole('checkbox', { name: 'e2e child' }).check();
      await forks.getByRole('button', { name: 'Compare 2/2' }).click();
      const compare = page.getByTestId('compare');
      await compare.waitFor();
      const changes = compare.getByRole('table', { name: 'State changes' });
      await changes.waitFor();
      assert.match(await changes.textContent(), /pos/);
      // Events from the fork point, then by world time; each state says its time.
      const events = compare.getByRole('table', { name: 'Event diff' });
      assert.match(await events.locator('tbody tr').first().locator('th').textContent(), /^\d+ fork$/);
      assert.match(await compare.getByTestId('event-diff-summary').textContent(), /; \d+ of \d+ world times differ$/);
      // The grid world draws its states: both pictures, side by side.
      assert.equal(await compare.getByTestId('state-pictures').getByRole('img').count(), 2);
      assert.match(await compare.getByTestId('state-times').textContent(), /^Each side's latest state: .+ at t=5, e2e child at t=3 — different world times/);
      const pictures = compare.getByTestId('state-pictures').getByRole('img');
      const latest = await pictures.first().getAttribute('aria-label');
      // At a common time: both states at t=3, the parent's picture as it was then.
      await compare.getByRole('spinbutton', { name: 'World time to compare the states at' }).fill('3');
      await compare.getByRole('button', { name: 'Show both at this time' }).click();
      await compare.getByTestId('state-times').getByText('Both states at world time t=3.').waitFor();
      assert.equal(await pictures.count(), 2);
      assert.match(await compare.getByTestId('state-pictures').textContent(), /at t=3.*e2e child at t=3/);
      const parentAt3 = await stack.call('StatesAt', parentRun, childRun, 3);
      assert.equal(parentAt3.a.time, 3);
      assert.match(await pictures.first().getAttribute('aria-label'), new RegExp(`agent at ${parentAt3.a.state.pos[0]}, ${parentAt3.a.state.pos[1]};`));
      await compare.getByRole('button', { name: 'Latest states' }).click();
      await compare.getByTestId('state-times').getByText(/^Each side's latest state/).waitFor();
      assert.equal(await pictures.first().getAttribute('aria-label'), latest);
      const diff = await stack.call('Diff', parentRun, childRun);
      assert.ok(diff, 'the API compares the same two runs');
      await compare.scrollIntoViewIfNeeded(); // the screenshot shows the comparison
      assert.deepEqual(page.problems, []);
    });
  });

  it('closes a comparison and leaves by the sidebar without a blank page', async () => {
    assert.ok(childRun, 'the fork journey ran first');
    await journey(stack, 'lineage-compare-close', async (page) => {
      const nav = page.getByRole('navigation', { name: 'Sections' });
      const notBlank = async (what) => {
        await nav.waitFor();
        assert.equal(await page.getByTestId('screen-error').count(), 0, `${what}: a screen failed to draw`);
        const text = (await page.locator('main').innerText()).trim();
        assert.ok(text.length > 20, `${what}: the screen is blank`);
        assert.deepEqual(page.problems, [], what);
      };
      await go(stack, page, '#/lineage');
      const graph = page.getByRole('group', { name: 'Lineage graph' });
      await graph.waitFor();
      await graph.getByRole('button', { name: /^branching_grid, simulated/ }).click();
      await graph.getByRole('button', { name: /^e2e child, simulated/ }).click({ modifiers: ['Shift'] });
      await page.getByRole('button', { name: 'Compare these two' }).click();
      const compare = page.getByTestId('compare');
      await compare.getByRole('table', { name: 'State changes' }).waitFor();
      await notBlank('after Compare');
      await compare.getByRole('button', { name: 'Close' }).click();
      await compare.waitFor({ state: 'detached' });
      await graph.waitFor();
      await notBlank('after Close');

      // Compare again, then leave by a sidebar link while it is open.
      await page.getByRole('button', { name: 'Compare these two' }).click();
      await compare.getByRole('table', { name: 'State changes' }).waitFor();
      await nav.getByRole('link', { name: 'Runs' }).click();
      await page.getByRole('region', { name: 'Data location' }).waitFor();
      await notBlank('after the sidebar link');

      // Compare on a world's page, then Close.
      await go(stack, page, `#/worlds/${encodeURIComponent(parentRun)}`);
      const forks = page.getByRole('region', { name: 'Forks of this world' });
      await forks.getByRole('checkbox', { name: 'this world' }).check();
      await forks.getByRole('checkbox', { name: 'e2e child' }).check();
      await forks.getByRole('button', { name: 'Compare 2/2' }).click();
      await compare.getByRole('table', { name: 'State changes' }).waitFor();
      await compare.getByRole('button', { name: 'Close' }).click();
      await compare.waitFor({ state: 'detached' });
      await notBlank('after Close on the world');
      await nav.getByRole('link', { name: 'Lineage' }).click();
      await graph.waitFor();
      await notBlank('after the Lineage link');

      // A world's timeline belongs to Worlds in the sidebar, not to Runs.
      await go(stack, page, `#/worlds/${encodeURIComponent(parentRun)}`);
      await page.getByRole('link', { name: 'Timeline' }).click();
      await page.getByTestId('timeline-row').first().waitFor();
      assert.equal(await nav.getByRole('link', { name: 'Worlds' }).getAttribute('aria-current'), 'page');
      assert.equal(await nav.getByRole('link', { name: 'Runs' }).getAttribute('aria-current'), null);
      await notBlank('on the world timeline');

      // The child's timeline: its numbers run on across the fork line, and the clocks are named in words.
      await go(stack, page, `#/timeline/${encodeURIComponent(childRun)}`);
      await page.locator('[data-testid="timeline-row"]:not(.inherited)').first().waitFor();
      const rows = await page.locator('[data-testid="timeline-row"]').evaluateAll((rs) =>
        rs.map((r) => ({ index: Number(r.dataset.index), n: r.querySelector('[role="cell"]').textContent.trim(), inherited: r.classList.contains('inherited') })),
      );
      rows.sort((x, y) => x.index - y.index);
      assert.ok(rows.some((r) => r.inherited) && rows.some((r) => !r.inherited), 'both sides of the fork line are shown');
      for (const r of rows) assert.equal(r.n, String(r.index + 1), 'one numbering across the fork line');
      const clocks = await page.getByRole('combobox', { name: 'Clock' }).locator('option').allTextContents();
      assert.deepEqual(clocks, ['Recorded time', 'Time in the parent', 'Deliberation round', 'World time']);
      // Issue 30, confusing 9: an event's detail names its clocks, not "parent · delib · local".
      await page.locator('[data-testid="timeline-row"]:not(.inherited)').first().click();
      assert.match(await page.getByTestId('event-clocks').textContent(), /^parent time \d+ · deliberation index \d+ · world-local time \d+$/);
    });
  });

  it('finds a world in the lineage, says why it matches, and moves between matches with the arrow keys', async () => {
    assert.ok(childRun, 'the fork journey ran first');
    await journey(stack, 'lineage-find', async (page) => {
      await go(stack, page, '#/lineage');
      const graph = page.getByRole('group', { name: 'Lineage graph' });
      await graph.waitFor();
      const box = page.getByRole('searchbox', { name: 'Search worlds by id or name' });
      const why = page.getByTestId('find-why');
      // Part of the child's run id: found by its run id, the text marked.
      const part = childRun.slice(-5);
      await box.fill(part);
      await box.press('ArrowDown');
      await graph.getByRole('button', { name: /^e2e child, simulated/, pressed: true }).waitFor();
      assert.equal(await why.textContent(), `e2e child: its run id ${childRun} holds “${part}”`);
      assert.equal(await why.locator('mark').textContent(), part);
      assert.notEqual(await backgroundOf(why.locator('mark')), TRANSPARENT, 'the matching text is marked in the accent');
      // What the fork changed: in the selected world's card, and under the edge.
      assert.equal(await page.getByTestId('fork-change').textContent(), '{"pos":[0,4]}');
      assert.match(await graph.getByTestId('edge-change').first().textContent(), /\{"pos":\[0,4\]\}/);
      // Issue 30, confusing 8: the arrow keys move between the worlds as they are drawn
      // (Left to the parent); the wheel scrolls the drawing, and zooms only with Ctrl.
      const childNode = graph.getByRole('button', { name: /^e2e child, simulated/, pressed: true });
      await childNode.focus();
      await childNode.press('ArrowLeft');
      await graph.getByRole('button', { name: /^branching_grid,/, pressed: true }).waitFor();
      assert.match(await page.evaluate(() => document.activeElement?.getAttribute('aria-label') ?? ''), /^branching_grid,/);
      const canvas = page.locator('.lineage-canvas');
      const zoom = () => canvas.getByText(/% · \d+ drawn$/).textContent();
      const moved = () => graph.locator('g').first().getAttribute('transform');
      const k = await zoom();
      const at = await moved();
      const area = await canvas.boundingBox();
      await page.mouse.move(area.x + area.width / 2, area.y + area.height / 2);
      await page.mouse.wheel(0, 120);
      await page.waitForFunction((before) => document.querySelector('[aria-label="Lineage graph"] g')?.getAttribute('transform') !== before, at);
      assert.equal(await zoom(), k, 'a plain wheel scrolls, it does not zoom');
      await page.keyboard.down('Control');
      await page.mouse.wheel(0, -120);
      await page.keyboard.up('Control');
      await page.waitForFunction((before) => !document.querySelector('.lineage-canvas')?.textContent?.includes(before), k);
      // Right goes back to the child.
      await graph.getByRole('button', { name: /^branching_grid,/, pressed: true }).press('ArrowRight');
      await graph.getByRole('button', { name: /^e2e child, simulated/, pressed: true }).waitFor();
      // Both worlds' names hold "i" (branching_grid, e2e child): the arrows move between them.
      await box.fill('i');
      await box.press('ArrowDown');
      await page.getByTestId('find-count').getByText('1 of 2').waitFor();
      const first = await page.getByRole('region', { name: /^Selected world/ }).getAttribute('aria-label');
      await box.press('ArrowDown');
      await page.getByTestId('find-count').getByText('2 of 2').waitFor();
      assert.notEqual(await page.getByRole('region', { name: /^Selected world/ }).getAttribute('aria-label'), first);
      await box.press('ArrowUp');
      await page.getByTestId('find-count').getByText('1 of 2').waitFor();
      assert.equal(await page.getByRole('region', { name: /^Selected world/ }).getAttribute('aria-label'), first);
      assert.deepEqual(page.problems, []);
    });
  });
});
