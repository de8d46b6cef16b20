// Journeys of a team on one PostgreSQL (a throw-away cluster,
// tests/e2e/pgserver): two installations — two `ducklm serve` on two data
// directories, one Chromium page each — and a `ducklm worker`. The Workers
// screen says none has joined, then lists the worker alive as it starts; a
// deliberation started in the window runs its branches on the worker (its
// live progress is checked by the dialog's Vitest: here the round may end
// within a second); a world run started from a world's Run panel "On the
// team's workers" goes to the worker as one job and the window says where it
// ran; a task run started on one installation appears
// and completes live in the other's window, both ways; a run one installation
// drives is approved from the other's page, and only its owner drives it.
//
// Two desktop (Wails) windows on one PostgreSQL are driven by tests/desktop
// TestTwoDesktopWindowsOnOnePostgresSeeEachOthersRuns (real windows under
// Xvfb, clicked on the words OCR reads off them); the Go test
// TestTwoDataDirectoriesShareOnePostgres proves the storage side.
import assert from 'node:assert/strict';
import { hostname } from 'node:os';
import { after, before, describe, it } from 'node:test';
import { go, journey, screenshot, shellPlan, startPostgres, startStack, startWorker } from './harness.mjs';

const PASSWORD = 'team-secret';

describe('Team on one PostgreSQL', { timeout: 420_000 }, () => {
  let pg;
  let a;
  let b;
  let worker;
  before(async () => {
    pg = await startPostgres(PASSWORD);
    const env = { DUCKLM_DATABASE_URL: pg.withPassword };
    // The first start migrates the database; the second waits for it (goose's lock).
    [a, b] = await Promise.all([startStack({ env }), startStack({ env })]);
  });
  after(async () => {
    await worker?.stop();
    await a?.stop();
    await b?.stop();
    await pg?.stop();
  });

  it('lists the team’s workers live, from none to one alive', async () => {
    await journey(a, 'team-workers', async (page) => {
      await go(a, page, '#/workers');
      const none = page.getByTestId('workers-none');
      await none.waitFor();
      assert.match(await none.textContent(), /No worker has joined this database yet\./);
      assert.match(await none.textContent(), /ducklm worker --slots 2/);

      worker = await startWorker(pg.withPassword, 2);
      const row = page.locator('tr[data-state="idle"]');
      await row.waitFor({ timeout: 60_000 });
      assert.match(await row.textContent(), /Idle\s*alive/);
      assert.match(await row.textContent(), /0 of 2 busy/);
      assert.match(await page.getByTestId('workers-summary').textContent(), /^1 worker alive: 0 of 2 slots busy\.$/);
      assert.deepEqual(page.problems, []);
    });
  });

  it('deliberates on the worker from the window and follows the progress', async () => {
    const created = await a.call('CreateWorld', { name: 'team grid', example: 'branching_grid', program: '', seed: 3 });
    const run = created.run.id;
    await journey(a, 'team-deliberate', async (page) => {
      await go(a, page, `#/worlds/${encodeURIComponent(run)}`);
      await page.getByTestId('grid-view').waitFor();
      await page.getByRole('button', { name: 'Deliberate…' }).click();
      const dialog = page.getByRole('dialog', { name: 'Deliberate' });
      await dialog.getByTestId('workers-choice').getByText('1 worker alive, 2 of 2 slots free', { exact: false }).waitFor();
      // The segmented control's label takes the click, as a person's does.
      await dialog.locator('label', { hasText: "On the team's workers" }).click();
      assert.ok(await dialog.getByRole('radio', { name: "On the team's workers" }).isChecked());
      await dialog.getByLabel('Depth').fill('4');
      await dialog.getByLabel('Budget').fill('60');
      await dialog.getByRole('button', { name: 'Deliberate', exact: true }).click();
      // The live progress ("… branches on workers") may last less than a
      // second on a quiet machine: the Vitest of the dialog checks it; here
      // the round's summary says where its branches ran.
      await dialog.getByRole('region', { name: 'Candidates' }).waitFor({ timeout: 120_000 });
      assert.match(await dialog.getByTestId('round-summary').textContent(), /^Round 1 at time 0: \d+ of 60 branches.*, the branches on the team's workers\. /);
      await screenshot(page, 'team-deliberate-candidates');
    });
    // The worker counts a finished job in its row within about half a second.
    const { workers } = await a.waitFor("the worker's jobs done", 'Workers', [], (v) => v.workers.length === 1 && v.workers[0].done > 0, 30_000);
    assert.equal(workers[0].state === 'idle' || workers[0].state === 'working', true);
    // The Workers screen counts jobs, and says so beside the round's branches: it read "Done 18"
    // after 98 branches, as if the two disagreed (issue 30, confusing 4).
    const [round] = await a.call('Deliberations', run);
    const branches = round.budget.used;
    await journey(a, 'team-workers-done', async (page) => {
      await go(a, page, '#/workers');
      const table = page.getByRole('table', { name: 'Workers' });
      await table.waitFor();
      assert.deepEqual(await table.locator('th').allTextContents(), ['Worker', 'State', 'Last heartbeat', 'Slots', 'Running now', 'Jobs done']);
      const done = Number((await table.getByTestId('worker-jobs-done').textContent()).replace(/,/g, ''));
      // The jobs the worker did are its own count (a job holds several branches), not the round's.
      assert.ok(done >= workers[0].done, `${done} jobs done, for ${branches} branches`);
      assert.match(
        await page.getByTestId('workers-jobs-note').textContent(),
        /^Jobs done counts jobs, not branches: a deliberation sends its branches to the workers in jobs of several, and its round says how many branches it ran\./,
      );
      assert.deepEqual(page.problems, []);
    });
    // The other installation reads the round the worker's branches made.
    assert.equal((await b.call('Deliberations', run)).length, 1);
  });

  it('runs a world on the worker from the window, sees it finish, and stops a long one', async () => {
    // A world that never ends: the steps asked for are the steps taken.
    const program = 'def init(seed):\n    return {"n": 0}\n\ndef step(state, action, rng):\n    return {"n": state["n"] + 1}, []\n\ndef observe(state, role):\n    return state\n';
    const created = await a.call('CreateWorld', { name: 'team counter', example: '', program, seed: 1 });
    const run = created.run.id;
    const slow = program.replace('def step(state, action, rng):\n', 'def step(state, action, rng):\n    for i in range(20000):\n        pass\n');
    const slowRun = (await a.call('CreateWorld', { name: 'team slow counter', example: '', program: slow, seed: 1 })).run.id;
    const { workers: before } = await a.call('Workers');
    await journey(a, 'team-world-run', async (page) => {
      await go(a, page, `#/worlds/${encodeURIComponent(run)}`);
      await page.getByTestId('run-workers-choice').getByText('1 worker alive', { exact: false }).waitFor({ timeout: 30_000 });
      await page.getByRole('textbox', { name: 'Steps to run' }).fill('300');
      // The segmented control's label takes the click, as a person's does.
      await page.locator('label', { hasText: "On the team's workers" }).click();
      assert.ok(await page.getByRole('radio', { name: "On the team's workers" }).isChecked());
      await page.getByRole('button', { name: 'Run 300 steps' }).click();
      // The progress ("N/300 steps on the team's workers") may last under a
      // second: the view's Vitest checks it; here the durable answer.
      await page.getByText("Ran 300 steps on the team's workers: world time 300.").waitFor({ timeout: 120_000 });
      await page.getByText('world time 300', { exact: true }).waitFor();
      await screenshot(page, 'team-world-run');
      // A run far longer than the journey waits for (each step loops): Stop ends its job on the worker.
      await go(a, page, `#/worlds/${encodeURIComponent(slowRun)}`);
      await page.getByTestId('run-workers-choice').getByText('1 worker alive', { exact: false }).waitFor({ timeout: 30_000 });
      await page.getByRole('textbox', { name: 'Steps to run' }).fill('100000');
      await page.locator('label', { hasText: "On the team's workers" }).click();
      // The stopped call answers with its sentence (HTTP 422), as it should.
      page.allowProblem(/^HTTP 422 for POST \/api\/call\/RunWorld$/);
      await page.getByRole('button', { name: 'Run 100000 steps' }).click();
      await page.getByTestId('run-workers-progress').getByText(/^[1-9]\d*\/100000 steps on the team's workers$/).waitFor({ timeout: 120_000 });
      await page.getByRole('button', { name: 'Stop' }).click();
      await page.getByText("Stopped on the team's workers: the run keeps the steps its worker saved.").waitFor({ timeout: 60_000 });
      assert.equal(await page.getByRole('alert').count(), 0, 'a stop is a status, not an error');
      assert.deepEqual(page.problems, ['HTTP 422 for POST /api/call/RunWorld']);
    });
    assert.equal((await b.call('WorldDetail', run)).run.worldLocalTime, 300, 'the other installation reads the steps the worker took');
    // The worker left the stopped job too.
    await a.waitFor("the worker's jobs done", 'Workers', [], (v) => v.workers.length === 1 && v.workers[0].done >= before[0].done + 2 && v.workers[0].jobs.length === 0, 60_000);
    const stoppedAt = (await a.call('WorldDetail', slowRun)).run.worldLocalTime;
    assert.ok(stoppedAt > 0 && stoppedAt < 100_000, `stopped part-way: world time ${stoppedAt}`);
  });

  it('shows a run started on one installation live in the other’s window, both ways', async () => {
    const pageA = await a.open();
    const pageB = await b.open();
    try {
      for (const [from, page, task] of [
        [b, pageA, 'team task started on B'],
        [a, pageB, 'team task started on A'],
      ]) {
        await page.getByRole('region', { name: 'Data location' }).waitFor();
        await page.getByRole('heading', { name: 'Runs' }).first().waitFor();
        const started = await from.call('SubmitTask', { task, plan: shellPlan('echo team'), approvalMode: 'auto_sandboxed' });
        const row = page.getByTestId('run-row').filter({ hasText: task });
        await row.waitFor({ timeout: 60_000 });
        await row.getByText('completed').waitFor({ timeout: 90_000 });
        // The list says which installation drives a run another one started.
        assert.equal(await row.getByTestId('driven-by').textContent(), `on ${hostname()}`);
        assert.equal((await (page === pageA ? a : b).call('RunDetail', started.id)).run.status, 'completed');
      }
      await screenshot(pageA, 'team-live-a');
      await screenshot(pageB, 'team-live-b');
      assert.deepEqual(pageA.problems, []);
      assert.deepEqual(pageB.problems, []);
    } finally {
      await pageA.close();
      await pageB.close();
    }
  });
  it('a run A drives is approved from B’s page and completes live in both; B starting again drives none of A’s runs', async () => {
    const host = hostname();
    const driven = `This run is driven by ducklm on ${host}; it goes on when that installation is running.`;
    const started = await a.call('SubmitTask', { task: 'team task A drives', plan: shellPlan('echo driven by A'), approvalMode: 'ask_every' });
    await a.waitFor('the run asks for approval', 'RunDetail', [started.id], (d) => d.run.status === 'awaiting_approval', 60_000);
    const pageA = await a.open();
    const pageB = await b.open();
    try {
      await pageA.goto(`${a.url}#/runs/${encodeURIComponent(started.id)}`);
      await pageB.goto(`${b.url}#/runs/${encodeURIComponent(started.id)}`);
      await pageA.getByTestId('approval-card').waitFor({ timeout: 30_000 });
      assert.equal(await pageA.getByTestId('driven-elsewhere').count(), 0, 'A drives its own run');
      const card = pageB.getByTestId('approval-card');
      await card.waitFor({ timeout: 30_000 });
      assert.equal((await pageB.getByTestId('driven-elsewhere').textContent()).trim(), driven);
      await card.getByRole('button', { name: 'Approve', exact: true }).click();
      // A, following the ledger, runs the step; both pages see the end live.
      await pageB.locator('.run-head [data-status="completed"]').waitFor({ timeout: 60_000 });
      await pageA.locator('.run-head [data-status="completed"]').waitFor({ timeout: 60_000 });
      assert.equal(await pageB.getByTestId('driven-elsewhere').count(), 0, 'an ended run is driven by no one');
      const done = await a.call('RunDetail', started.id);
      assert.equal(done.state.steps['step-1'].result.ok, true);
      await screenshot(pageB, 'team-approved-from-b');
      assert.deepEqual(pageA.problems, []);
      assert.deepEqual(pageB.problems, []);
    } finally {
      await pageA.close();
      await pageB.close();
    }

    // A is not running: B answers A's next run, then starts again. Its
    // start resumes none of A's runs; A, started again, drives it to the end.
    const next = await a.call('SubmitTask', { task: 'team task waits for A', plan: shellPlan('echo waited for A'), approvalMode: 'ask_every' });
    await a.waitFor('the run asks for approval', 'RunDetail', [next.id], (d) => d.run.status === 'awaiting_approval', 60_000);
    await a.serve.stop();
    const [request] = (await b.call('RunDetail', next.id)).approvals;
    await b.call('Answer', { runId: next.id, requestId: request.requestId, approve: true, args: '', reason: '', network: false, idempotencyKey: 'journey' });
    await b.restart();
    // ducklm serve logs the runs it resumed before it serves ("resumed runs" runs="[…]").
    assert.doesNotMatch(b.serve.output, new RegExp(`resumed runs.*${next.id}`), 'B resumed one of A’s runs');
    const waiting = await b.call('RunDetail', next.id);
    assert.notEqual(waiting.run.status, 'completed');
    assert.equal(waiting.drivenElsewhere, driven);
    await a.restart();
    assert.match(a.serve.output, new RegExp(`resumed runs.*${next.id}`), 'A resumes its run');
    await b.waitFor('A drives its run to the end', 'RunDetail', [next.id], (d) => d.run.status === 'completed', 60_000);
  });
});
