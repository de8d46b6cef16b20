// Journey: a real Ollama server (tests/realmodel: built from the Go module
// proxy, CPU only, with tiny random-weight models) behind `ducklm serve`.
// Settings lists the real models; a natural-language task typed into the
// New task form is planned by the real model, its tokens stream into the run
// view as they come, and the run ends with every planning attempt shown and
// a sentence that says what to do next.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { go, journey, startStack } from './harness.mjs';

describe('A real model server', { timeout: 300_000 }, () => {
  let stack;
  before(async () => {
    stack = await startStack({ realOllama: true });
  });
  after(async () => {
    await stack?.stop();
  });

  it('lists the real models in Settings', async () => {
    await journey(stack, 'real-settings', async (page) => {
      await go(stack, page, '#/settings');
      const found = page.getByRole('list', { name: 'Models found' });
      await found.waitFor();
      const models = (await found.getByRole('listitem').allTextContents()).map((m) => m.replace(/:latest$/, ''));
      for (const m of ['tiny', 'tiny-random', 'tiny-loop', 'tiny-endless']) assert.ok(models.includes(m), `${m} in ${models}`);
      assert.match(await page.getByTestId('ollama-reachable').textContent(), /lists 4 models/);
      assert.deepEqual(page.problems, []);
    });
  });

  it('plans a typed task with the real model, streaming its tokens into the run view', async () => {
    await journey(stack, 'real-planned-task', async (page) => {
      await go(stack, page, '#/new');
      await page.getByRole('textbox', { name: 'Task' }).fill('list the files in the workspace');
      // tiny-endless never chooses to stop: each answer streams to its
      // token limit, long enough to watch it arrive.
      await page.getByRole('combobox', { name: 'Model for the planner' }).selectOption('tiny-endless:latest');
      await page.getByRole('combobox', { name: 'Model for the critic' }).selectOption('tiny:latest');
      await page.getByRole('button', { name: 'Start run' }).click();

      const tokens = page.getByTestId('planner-tokens');
      await tokens.waitFor({ timeout: 60_000 });
      await page.waitForFunction(() => (document.querySelector('[data-testid="planner-tokens"]')?.textContent ?? '').length > 20);
      const seen = await tokens.textContent();

      const planning = page.getByTestId('planning');
      await page.getByText('The run failed:').waitFor({ timeout: 90_000 });
      const failed = await page.getByRole('alert').filter({ hasText: 'The run failed:' }).textContent();
      assert.match(failed, /tiny-endless/, 'the sentence names the model');
      assert.match(failed, /explicit plan/, 'and the next step');
      if ((await planning.getAttribute('open')) === null) await planning.locator('summary').first().click();
      const attempts = planning.locator('[data-testid^="attempt-"]');
      assert.equal(await attempts.count(), 3, 'the first attempt and two replans');
      const first = attempts.first();
      assert.match(await first.textContent(), /tiny-endless/);
      assert.match(await first.textContent(), /temperature 0/);
      const second = await attempts.nth(1).textContent();
      assert.match(second, /seed 1/, 'a replan is a different request: its own seed');
      assert.match(second, /temperature 0\.3/, 'and a higher temperature');
      await first.getByText("The model's answer").click();
      const answers = await planning.locator('pre').allTextContents();
      assert.ok(
        answers.some((a) => a.startsWith(seen.slice(0, 20))),
        `what streamed (${JSON.stringify(seen.slice(0, 40))}) is the start of a recorded answer`,
      );
      assert.deepEqual(page.problems, []);
    });
  });
});
