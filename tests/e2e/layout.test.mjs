// Journey: the window at its narrowest (800 px wide): every screen fits
// the width, with no sideways scrolling and nothing cut off at the right.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { go, journey, shellPlan, startStack } from './harness.mjs';

const SCREENS = ['#/', '#/new', '#/worlds', '#/lineage', '#/memory', '#/workers', '#/settings'];

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
        // Text cut with an ellipsis can be read whole in its tooltip.
        const untitled = await page.evaluate(() =>
          [...document.querySelectorAll('main .ellipsis, main [class*="ellipsis"]')]
            .filter((e) => e.scrollWidth > e.clientWidth + 1)
            .filter((e) => !e.closest('[title]'))
            .slice(0, 5)
            .map((e) => `${e.tagName.toLowerCase()}.${[...e.classList].join('.')}: ${e.textContent.slice(0, 40)}`),
        );
        assert.deepEqual(untitled, [], `${hash}: text cut without a tooltip`);
      }
      assert.deepEqual(page.problems, []);
    });
  });

  it('keeps the Settings save bar off the cards until there is something to save', async () => {
    await journey(stack, 'settings-bar', async (page) => {
      await page.setViewportSize({ width: 800, height: 600 });
      await go(stack, page, '#/settings');
      const bar = page.getByRole('region', { name: 'Save settings' });
      await bar.waitFor();
      await page.getByLabel('Ollama host').waitFor();
      // Scrolled anywhere, a settled screen's bar lies over no card.
      for (const frac of [0, 0.3, 0.6, 1]) {
        const covered = await page.evaluate((f) => {
          const main = document.querySelector('.app-main');
          main.scrollTop = (main.scrollHeight - main.clientHeight) * f;
          const b = document.querySelector('.settings-bar').getBoundingClientRect();
          return [...document.querySelectorAll('.settings .panel')]
            .map((p) => p.getBoundingClientRect())
            .filter((r) => r.bottom > b.top + 1 && r.top < b.bottom - 1 && r.height > 0).length;
        }, frac);
        assert.equal(covered, 0, `the save bar covers ${covered} card(s) at ${frac * 100}% of the screen`);
      }
      // With a change to save, it floats at the bottom of the window.
      await page.getByLabel('Ollama host').fill('127.0.0.1:11434');
      await page.waitForFunction(() => getComputedStyle(document.querySelector('.settings-bar')).position === 'sticky', null, { timeout: 10_000 });
      assert.deepEqual(page.problems, []);
    });
  });
});
