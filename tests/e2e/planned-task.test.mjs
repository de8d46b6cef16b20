// Journey: a natural-language task planned by the (fake) model. The fake
// Ollama streams a one-step shell_exec plan for "list the workspace"
// (ollama-script.json); the page receives the streamed tokens and the run's
// events live, the run completes, and its review's answer (citing the step)
// is the first thing the run view shows.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { appReady, journey, startStack } from './harness.mjs';

describe('A task planned by the model', { timeout: 90_000 }, () => {
  let stack;
  before(async () => {
    stack = await startStack();
  });
  after(async () => {
    await stack?.stop();
  });

  it('streams the plan tokens and the run events to the page', async () => {
    await journey(stack, 'planned-task', async (page) => {
      await appReady(page);
      // A second listener on the page's stream, as a screen would add one.
      await page.evaluate(() => {
        const token = new URL(location.href).searchParams.get('token');
        window.e2eTokens = '';
        const es = new EventSource(`/api/events?token=${token}`);
        es.addEventListener('run:tokens', (e) => {
          for (const t of JSON.parse(e.data)) window.e2eTokens += t.text;
        });
        return new Promise((resolve) => es.addEventListener('open', resolve, { once: true }));
      });

      const models = await stack.call('Models');
      assert.equal(models.reachable, true, `the fake Ollama answers: ${JSON.stringify(models)}`);
      const run = await stack.call('SubmitTask', { task: 'list the workspace', approvalMode: 'auto_sandboxed' });

      const rows = page.getByTestId('event-row');
      await rows.filter({ hasText: 'plan.accepted' }).first().waitFor();
      await page.waitForFunction(() => window.e2eTokens.includes('"decision":"plan"'));
      const streamed = await page.evaluate(() => window.e2eTokens);
      assert.match(streamed, /"command":"ls -la"/);

      const detail = await stack.waitFor('the run ends', 'RunDetail', [run.id], (d) =>
        ['completed', 'failed', 'awaiting_approval'].includes(d.run.status),
      );
      assert.equal(detail.run.status, 'completed', JSON.stringify(detail.state).slice(0, 800));
      await rows.filter({ hasText: 'run.completed' }).first().waitFor();
      const finished = rows.filter({ hasText: 'step.finished' }).first();
      await finished.waitFor();
      assert.match(await finished.textContent(), /"ok":true/);
      await rows.filter({ hasText: 'run.answered' }).first().waitFor();

      // The run view shows the answer first, and its citation opens the step.
      await page.evaluate((id) => (location.hash = `#/runs/${id}`), run.id);
      const answer = page.getByTestId('run-answer');
      await answer.waitFor();
      assert.match(await answer.textContent(), /The listing from step-1 shows the workspace's files and folders/);
      assert.match(await answer.textContent(), /Rests on step-1/);
      await answer.getByRole('button', { name: 'step-1' }).click();
      await page.getByTestId('step-panel').filter({ hasText: 'ls -la' }).waitFor();
      // The Runs list shows the answer's first line.
      await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Runs' }).click();
      await page.getByTestId('run-answer-line').filter({ hasText: 'The listing from step-1' }).first().waitFor();
      assert.deepEqual(page.problems, []);
    });
  });
});
