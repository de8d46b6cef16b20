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
});
