// Journey: the page `ducklm serve` serves, opened without its token (the
// address typed by hand, a bookmark without ?token=…), says how to open it
// with one instead of "the backend is not reachable".
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { journey, startStack } from './harness.mjs';

describe('A served page without its token', { timeout: 90_000 }, () => {
  let stack;
  before(async () => {
    stack = await startStack();
  });
  after(async () => {
    await stack?.stop();
  });

  it('says to open the printed address with its token', async () => {
    await journey(stack, 'no-token', async (page) => {
      // A new tab: its session storage has no token either.
      const bare = await stack.context.newPage();
      try {
        await bare.goto(stack.base);
        await bare.getByText(/This page was opened without its token\. Open the address `ducklm serve` printed/).first().waitFor();
        assert.equal(await bare.getByText("ducklm's backend is not reachable").count(), 0);
        // Issue 30, confusing 9: not 'could not open its data' with a Retry that cannot help.
        await bare.getByRole('heading', { name: 'Open the address ducklm serve printed' }).waitFor();
        assert.equal(await bare.getByText('ducklm could not open its data').count(), 0);
        assert.equal(await bare.getByRole('button', { name: 'Retry' }).count(), 0);
      } finally {
        await bare.close();
      }
      assert.deepEqual(page.problems, []);
    });
  });
});
