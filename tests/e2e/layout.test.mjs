// Journey: the window at its narrowest (800 px wide): every screen fits
// the width, with no sideways scrolling and nothing cut off at the right.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { go, journey, shellPlan, startStack } from './harness.mjs';

const SCREENS = ['#/', '#/new', '#/worlds', '#/lineage', '#/memory', '#/settings'];

describe('Layout at 800 px', { timeout: 120_000 }, () => {
  let stack;
  before(async () => {
    stack = await startStack();
  });
  after(async () => {
    await stack?.stop();
  });

  it('fits every screen in an 800 px window', async () => {
    await journey(stack, 'layout-800', async (page) => {
      await page.setViewportSize({ width: 800, height: 700 });
      const run = await stack.call('SubmitTask', { task: 'say hello', plan: shellPlan('echo hello'), approvalMode: 'auto_sandboxed' });
      for (const hash of [...SCREENS, `#/runs/${encodeURIComponent(run.id)}`]) {
        await go(stack, page, hash);
        await page.locator('main h1, main h2').first().waitFor();
        const wide = await page.evaluate(() => {
          const width = document.documentElement.clientWidth;
          const over = document.documentElement.scrollWidth - width;
          // Inside a surface that clips its content (the lineage's pan and
          // zoom canvas, a text cut with an ellipsis) a part beyond the edge
          // is panned or cut on purpose; the surface itself must fit.
          const clipped = (e) => {
            for (let a = e.parentElement; a && a !== document.body; a = a.parentElement) {
              const o = getComputedStyle(a).overflowX;
              if ((o === 'hidden' || o === 'clip') && a.getBoundingClientRect().right <= width + 1) return true;
            }
            return false;
          };
          const cut = [...document.querySelectorAll('main *')]
            .filter((e) => e.getBoundingClientRect().width > 0 && e.getBoundingClientRect().right > width + 1 && !clipped(e))
            .slice(0, 5)
            .map((e) => `${e.tagName.toLowerCase()}.${[...e.classList].join('.')}`);
          return { over, cut };
        });
        assert.deepEqual(wide, { over: 0, cut: [] }, `${hash} is wider than 800 px`);
      }
      assert.deepEqual(page.problems, []);
    });
  });
});
