// Journey: a person asks for a summary of release notes at a URL. The
// (fake) model plans it as one web_fetch step of that URL; the URL names
// this machine (a loopback test server the journey starts), so the run
// waits for its own approval; the card shows the URL, host, method and
// limits; the person approves it and the page's text shows in the run view.
import assert from 'node:assert/strict';
import { readFile, writeFile, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { appReady, journey, screenshot, SCRIPT, startStack } from './harness.mjs';

const NOTES = `<!doctype html><html><head><title>Duck 2.4 release notes</title></head><body>
<nav><a href="/">Home</a> <a href="/login">Log in</a></nav>
<article><h1>Duck 2.4 release notes</h1>
<p>Duck 2.4 reads web pages for a task, within time, size and redirect limits, and keeps the raw body as a blob.</p>
<p>Pages that need JavaScript are rendered by a sandboxed browser with a throw-away profile.</p>
<p>Only hosts the user approved are ever contacted; private addresses need their own approval.</p></article>
</body></html>`;

const APP = `<!doctype html><html><head><title>Duck app</title></head><body><div id="root"></div>
<script>document.getElementById('root').innerHTML = '<h1>Rendered by script</h1><p>The dashboard says 42 ducks.</p>'</script></body></html>`;

describe('A task with a URL', { timeout: 180_000 }, () => {
  let stack;
  let site;
  let hits = 0;
  let dir;
  let url;
  before(async () => {
    site = createServer((req, res) => {
      hits++;
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
      res.end(req.url.startsWith('/app') ? APP : NOTES);
    });
    await new Promise((resolve) => site.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${site.address().port}/notes.html`;
    // The fake model plans this task, with this URL, as one web_fetch step.
    const script = JSON.parse(await readFile(SCRIPT, 'utf8'));
    script.replies.unshift({
      match: 'summarise the release notes at',
      system: 'You are the planner of ducklm',
      json: {
        decision: 'plan',
        reason: 'The task names a URL, so web_fetch reads it.',
        confidence: 0.9,
        plan: { nodes: [{ id: 'step-1', kind: 'tool', tool: 'web_fetch', args: { url }, depends_on: [], title: 'read the release notes' }] },
      },
    });
    script.replies.unshift({
      match: 'show what the app at',
      system: 'You are the planner of ducklm',
      json: {
        decision: 'plan',
        reason: 'The page needs JavaScript, so the browser renders it.',
        confidence: 0.9,
        plan: {
          nodes: [{ id: 'step-1', kind: 'tool', tool: 'browser', args: { url: url.replace('/notes.html', '/app') }, depends_on: [], title: 'render the app' }],
        },
      },
    });
    // The reviews of their results answer from the page, citing the step
    // that read it (first: a review's prompt holds the task's text too).
    script.replies.unshift(
      {
        match: '- step-1 (web_fetch',
        system: 'You are the planner of ducklm',
        json: {
          decision: 'respond',
          reason: 'The page says it.',
          confidence: 0.9,
          response: 'Duck 2.4 reads web pages within time, size and redirect limits, and keeps the raw body as a blob.',
          cites: ['step-1'],
        },
      },
      {
        match: '- step-1 (browser',
        system: 'You are the planner of ducklm',
        json: { decision: 'respond', reason: 'The rendered page says it.', confidence: 0.9, response: 'The dashboard says 42 ducks.', cites: ['step-1'] },
      },
    );
    dir = await mkdtemp(path.join(tmpdir(), 'ducklm-e2e-web-'));
    const file = path.join(dir, 'ollama-script.json');
    await writeFile(file, JSON.stringify(script));
    stack = await startStack({ script: file });
  });
  after(async () => {
    await stack?.stop();
    await new Promise((resolve) => site?.close(resolve));
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('plans web_fetch, asks for the loopback host, and shows the text once approved', async () => {
    await journey(stack, 'web-fetch', async (page) => {
      await appReady(page);
      await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'New task' }).click();
      await page.getByRole('heading', { name: 'New task' }).waitFor();
      await page.getByRole('textbox', { name: 'Task' }).fill(`summarise the release notes at ${url}`);
      await page.getByRole('button', { name: 'Start run' }).click();

      await page.waitForURL(/#\/runs\/run_/);
      const card = page.getByTestId('approval-card');
      await card.waitFor({ timeout: 60_000 });
      const plan = card.getByTestId('approval-web');
      await plan.waitFor();
      const planText = await plan.textContent();
      assert.match(planText, new RegExp(url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
      assert.match(planText, /127\.0\.0\.1/);
      assert.match(planText, /a loopback address: this machine or your network/);
      assert.match(planText, /GET/);
      assert.match(planText, /5 MiB of body, 5 redirects/);
      assert.match(await card.textContent(), /web_private/);
      assert.equal(hits, 0, 'nothing is fetched before the approval');
      // The page is fetched and read in a web worker, in bubblewrap (the e2e machine has it).
      assert.match(await card.getByTestId('confinement').textContent(), /in a web worker process/);
      assert.equal(await card.getByTestId('approval-sandbox').textContent(), 'bubblewrap');
      await screenshot(page, 'web-fetch-approval');

      await card.getByRole('button', { name: 'Approve', exact: true }).click();
      await page.locator('.run-head [data-status="completed"]').waitFor({ timeout: 60_000 });
      // The step shows what the page said as a page: its status, final URL, type and text.
      const pageText = page.getByTestId('web-text');
      await pageText.filter({ hasText: 'Duck 2.4 reads web pages for a task' }).waitFor({ timeout: 30_000 });
      const text = await pageText.textContent();
      assert.doesNotMatch(text, /Log in/, 'the page furniture is not the text');
      assert.match(await page.getByTestId('web-status').textContent(), /200/);
      // The record says where it ran: the web worker, held by bubblewrap.
      assert.match(await page.getByTestId('step-confinement').textContent(), /in a web worker process/);
      assert.equal(await page.getByTestId('step-sandbox').textContent(), 'bubblewrap');
      // The run answers from the page, citing the step that read it.
      const answer = page.getByTestId('run-answer');
      await answer.filter({ hasText: 'Duck 2.4 reads web pages within time, size and redirect limits' }).waitFor();
      assert.match(await answer.textContent(), /Rests on step-1/);
      assert.equal(hits, 1);
      assert.deepEqual(page.problems, []);
    });
  });

  it('renders a page that needs JavaScript in the sandboxed browser and shows its screenshot', async () => {
    await journey(stack, 'web-browser', async (page) => {
      await appReady(page);
      const app = url.replace('/notes.html', '/app');
      await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'New task' }).click();
      await page.getByRole('heading', { name: 'New task' }).waitFor();
      await page.getByRole('textbox', { name: 'Task' }).fill(`show what the app at ${app} says`);
      await page.getByRole('button', { name: 'Start run' }).click();
      await page.waitForURL(/#\/runs\/run_/);
      const card = page.getByTestId('approval-card');
      await card.waitFor({ timeout: 60_000 });
      assert.match(await card.getByTestId('approval-web').textContent(), /rendered in the sandboxed Chromium/);
      await card.getByRole('button', { name: 'Approve', exact: true }).click();
      await page.locator('.run-head [data-status="completed"]').waitFor({ timeout: 120_000 });
      await page.getByTestId('web-text').filter({ hasText: 'The dashboard says 42 ducks.' }).waitFor({ timeout: 30_000 });
      // Issue 30, confusing 5: the browser step that succeeded shows its page, not red stderr about
      // Chromium's own calls home with a suggestion to allow them.
      assert.match(await page.getByTestId('web-status').textContent(), /200/);
      assert.equal(await page.getByTestId('step-panel').getByTestId('stderr').count(), 0);
      assert.equal(await page.getByTestId('step-panel').getByText(/allow it for the run or in Settings/).count(), 0);
      await page.getByTestId('run-answer').filter({ hasText: 'The dashboard says 42 ducks.' }).waitFor();
      const shot = page.getByRole('img', { name: `Screenshot of ${app}` });
      await shot.waitFor({ timeout: 30_000 });
      await page.waitForFunction((el) => el.complete && el.naturalWidth > 0, await shot.elementHandle());
      assert.ok((await shot.evaluate((el) => el.naturalWidth)) >= 800, 'the screenshot is the rendered page');
      assert.deepEqual(page.problems, []);
    });
  });
});
