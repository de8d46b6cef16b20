// Issue 30, confusing 1: the switch to a team's PostgreSQL. A person with a
// forked world and a task waiting for approval on this machine's database
// tests a team address (a server nobody answers at: one sentence), chooses
// the team's database, is told how to restart `ducklm serve` (the page
// cannot), and after the restart finds on Home where the local data is and
// that it is untouched; copies it (each lineage through the import path,
// the waiting run refused with why), sees the world in the team's Worlds,
// switches back, and after another restart finds the waiting run again.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createServer } from 'node:net';
import path from 'node:path';
import { appReady, go, journey, shellPlan, startPostgres, startStack } from './harness.mjs';

const PASSWORD = 'team pass-phrase';
const RESTART_IN_BROWSER =
  'ducklm serve cannot restart itself from this page: stop it where it runs (Ctrl+C) and start `ducklm serve` again, then open the new address it prints (its token changes at each start).';

/** A loopback port nothing listens on. */
async function deadPort() {
  const srv = createServer();
  await new Promise((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address();
  await new Promise((resolve) => srv.close(resolve));
  return port;
}

describe('Team switch', { timeout: 300_000 }, () => {
  let pg;
  let stack;
  let waiting;
  let world;
  before(async () => {
    [pg, stack] = await Promise.all([startPostgres(PASSWORD), startStack()]);
    world = await stack.call('CreateWorld', { name: 'Local grid', example: 'branching_grid', seed: 7 });
    await stack.call('RunWorld', { runId: world.run.id, steps: 4, checkpointEvery: 2 });
    waiting = await stack.call('SubmitTask', { task: 'say hello locally', plan: shellPlan('echo hello'), approvalMode: 'ask_every' });
    await stack.waitFor('the task waits for its approval', 'RunDetail', [waiting.id], (d) => d.approvals.length > 0);
  });
  after(async () => {
    await stack?.stop();
    await pg?.stop();
  });

  it('tests a dead address in one sentence, saves the team database and says how to restart in the browser', async () => {
    await journey(stack, 'team-switch-save', async (page) => {
      await appReady(page);
      await go(stack, page, '#/settings');
      const section = page.getByRole('region', { name: 'Database' });
      const dead = `postgres://ducklm@localhost:${await deadPort()}/ducklm`;
      await section.getByLabel('Database address').fill(dead);
      await section.getByRole('button', { name: 'Test the database connection' }).click();
      const refused = section.getByTestId('database-unreachable');
      await refused.waitFor();
      const said = await refused.textContent();
      assert.match(said, /^✗ PostgreSQL at postgres:\/\/ducklm@localhost:\d+\/ducklm cannot be reached: nothing accepts connections on localhost:\d+; check the host and port, and that the server runs\.$/);
      assert.ok(!/dial|connection refused/.test(said), `no driver error: ${said}`);

      await section.getByLabel('Database address').fill(pg.address);
      await section.getByLabel('Database password').fill(PASSWORD);
      await section.getByRole('button', { name: 'Use at next start' }).click();
      await section.getByTestId('database-saved').waitFor();
      assert.equal(await section.getByTestId('restart-in-browser').textContent(), RESTART_IN_BROWSER);
      assert.equal(await section.getByRole('button', { name: 'Restart now' }).count(), 0, 'the page cannot restart the server that serves it');
    });
  });

  it('says after the restart where the local data is, copies it through bundles and shows the report', async () => {
    await stack.restart();
    await journey(stack, 'team-switch-copy', async (page) => {
      await appReady(page);
      const panel = page.getByRole('region', { name: "This machine's data" });
      await panel.waitFor();
      const local = path.join(stack.home, 'ducklm.db');
      assert.equal(await panel.getByTestId('local-data-path').textContent(), local);
      assert.match(await panel.textContent(), new RegExp(`ducklm now uses the team database ${escape(pg.address)}\\. What you did before is still on this machine, in ${escape(local)}, untouched`));
      assert.match(
        await panel.getByTestId('local-data-holds').textContent(),
        /^It holds 1 task run and 1 simulated world\. 1 of its task runs has not finished \(waiting for an approval, or paused\)/,
      );

      await panel.getByRole('button', { name: 'Copy my local runs and worlds to the team database' }).click();
      const report = panel.getByTestId('local-copy');
      await report.waitFor();
      assert.match(await report.getByRole('status').first().textContent(), new RegExp(`^Copied 1 of 2 lineages from ${escape(local)} \\(left as it was\\); the others say why below\\. Added here: 1 world, 1 run, 0 forks`));
      const grid = report.locator(`[data-root="${world.world.id}"]`);
      assert.match(await grid.textContent(), /Local grid \(simulated world\)Imported: added 1 world, 1 run/);
      await grid.getByText('Import report').click();
      await grid.getByText('This bundle checks out.').waitFor();
      const task = report.locator(`li[data-root="${waiting.worldId}"]`);
      assert.match(await task.textContent(), /\(task run\)Not copied: this task run is still awaiting approval, and only finished runs are copied/);

      // The world is the team's now: the Worlds screen lists it.
      await go(stack, page, '#/worlds');
      await page.getByText('Local grid').first().waitFor();
    });
  });

  it('switches back, and after the restart the waiting run is there again', async () => {
    await journey(stack, 'team-switch-back', async (page) => {
      await appReady(page);
      const panel = page.getByRole('region', { name: "This machine's data" });
      await panel.getByRole('button', { name: 'Switch back to the local database' }).click();
      await panel.getByTestId('local-data-switched').getByText(`Saved. ducklm opens this machine's SQLite database in ${stack.home} at its next start`, { exact: false }).waitFor();
      assert.equal(await panel.getByTestId('restart-in-browser').textContent(), RESTART_IN_BROWSER);
    });
    await stack.restart();
    await journey(stack, 'team-switch-back-local', async (page) => {
      await appReady(page);
      assert.equal(await page.getByRole('region', { name: "This machine's data" }).count(), 0, 'on the local database there is no other local data');
      await go(stack, page, `#/runs/${waiting.id}`);
      await page.getByText('say hello locally').first().waitFor();
      await go(stack, page, '#/settings');
      assert.equal(await page.getByRole('region', { name: 'Database' }).getByTestId('database-in-use').textContent(), path.join(stack.home, 'ducklm.db'));
    });
  });
});

function escape(s) {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
