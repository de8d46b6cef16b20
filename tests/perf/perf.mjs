// The GUI's performance targets, measured for real and reported (never
// asserted by a unit test):
//   - lineage: 5,000 generated worlds laid out and first drawn in ≤ 2 s from
//     navigation, then frame times while panning and zooming;
//   - deliberation: a 1,000-branch, depth-20 round of `ducklm world
//     deliberate` in ≤ 10 s, and the lineage holding it drawn in ≤ 2 s;
//   - timeline: a world of 1M events, first rows painted in ≤ 300 ms and only
//     the rows in view in the DOM before, while and after scrolling;
//   - the desktop app's idle memory on the home screen, PSS summed over the
//     ducklm process and all its descendants (WebKit's processes), ≤ 260 MB.
// The data is made by `ducklm gen` (the real services) in fresh data
// directories; the browser measurements run `ducklm serve` in Debian's
// Chromium (playwright-core from tests/e2e), the memory one the desktop
// binary under the current X display (scripts/perf.sh starts Xvfb).
//
//   DUCKLM_BIN=build/bin/ducklm node tests/perf/perf.mjs [--skip-gen-check]
//   env: PERF_WORLDS (5000), PERF_EVENTS (1000000), PERF_ONLY (lineage,deliberation,timeline,memory),
//        PERF_DATA (a folder to keep the generated data directories in and
//        reuse on the next run; by default they are made fresh and removed)
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { chromium } from '../e2e/node_modules/playwright-core/index.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, '..', '..');
const BIN = path.resolve(process.env.DUCKLM_BIN ?? path.join(REPO, 'build', 'bin', 'ducklm'));
const CHROMIUM = process.env.CHROMIUM_BIN ?? '/usr/bin/chromium';
const WORLDS = Number(process.env.PERF_WORLDS ?? 5000);
const EVENTS = Number(process.env.PERF_EVENTS ?? 1_000_000);
const ONLY = new Set((process.env.PERF_ONLY ?? 'lineage,deliberation,timeline,memory').split(','));
const SERVING_LINE = /^ducklm serving on (http:\/\/127\.0\.0\.1:\d+\/)\?token=([0-9a-f]{32})$/;

const results = [];
/** report records one measurement against its goal (goal undefined: for information). */
function report(what, measured, goal, ok) {
  results.push({ what, goal: goal ?? '—', measured, verdict: ok === undefined ? '' : ok ? 'met' : 'MISSED', load: load() });
  console.error(`  ${what}: ${measured}${goal ? ` (goal ${goal})` : ''}`);
}
const load = () => loadavg()[0].toFixed(2);
const ms = (n) => `${Math.round(n)} ms`;
const mb = (kb) => `${(kb / 1024).toFixed(1)} MB`;

function quantile(xs, q) {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
}

/**
 * gen runs `ducklm gen ...` on a data directory and returns its JSON answer
 * and wall time; with PERF_DATA, a directory generated before is reused.
 */
async function gen(home, args) {
  const saved = path.join(home, 'gen.json');
  if (process.env.PERF_DATA && existsSync(saved)) return { ...JSON.parse(readFileSync(saved, 'utf8')), reused: true };
  const started = performance.now();
  const { stdout } = await promisify(execFile)(BIN, ['gen', ...args, '--json'], {
    env: { ...process.env, DUCKLM_HOME: home },
    maxBuffer: 1 << 20,
    timeout: 600_000,
  });
  const res = { out: JSON.parse(stdout), seconds: (performance.now() - started) / 1000 };
  if (process.env.PERF_DATA) writeFileSync(saved, JSON.stringify(res));
  return res;
}

/** Child is a started process whose stdout/stderr lines are watched. */
class Child {
  constructor(cmd, args, env) {
    this.output = '';
    this.proc = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    this.exited = new Promise((resolve) => this.proc.once('exit', resolve));
    this.waiters = [];
    const feed = (d) => {
      this.output += d;
      for (const w of [...this.waiters]) {
        const m = w.re.exec(this.output);
        if (m) {
          this.waiters.splice(this.waiters.indexOf(w), 1);
          w.resolve(m);
        }
      }
    };
    this.proc.stdout.on('data', feed);
    this.proc.stderr.on('data', feed);
  }

  /** waitFor resolves when the output matches re. */
  waitFor(re, timeoutMs = 60_000) {
    const m = re.exec(this.output);
    if (m) return Promise.resolve(m);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ${re} within ${timeoutMs} ms:\n${this.output.slice(-2000)}`)), timeoutMs);
      this.waiters.push({ re, resolve: (x) => (clearTimeout(timer), resolve(x)) });
      this.exited.then((code) => reject(new Error(`exited (${code}) before ${re}:\n${this.output.slice(-2000)}`)));
    });
  }

  async stop() {
    if (this.proc.exitCode !== null || this.proc.signalCode !== null) return;
    this.proc.kill('SIGTERM');
    const t = setTimeout(() => this.proc.kill('SIGKILL'), 10_000);
    await this.exited;
    clearTimeout(t);
  }
}

/** serve starts `ducklm serve` on a data directory and returns its URL. */
async function serve(home) {
  const c = new Child(BIN, ['serve', '--addr', '127.0.0.1:0'], { ...process.env, DUCKLM_HOME: home, OLLAMA_HOST: '127.0.0.1:1' });
  const m = await c.waitFor(new RegExp(SERVING_LINE.source, 'm'));
  return { child: c, url: `${m[1]}?token=${m[2]}` };
}

async function browser(work) {
  return chromium.launchPersistentContext(path.join(work, 'chromium'), {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
    viewport: { width: 1440, height: 900 },
  });
}

/** markTime waits for a performance mark the app sets and returns its time since navigation. */
async function markTime(page, name, timeoutMs = 60_000) {
  await page.waitForFunction((n) => performance.getEntriesByName(n).length > 0, name, { timeout: timeoutMs, polling: 50 });
  return page.evaluate((n) => {
    const m = performance.getEntriesByName(n)[0];
    return { at: m.startTime, detail: m.detail };
  }, name);
}

/**
 * openInApp opens a screen from another one of the running app (as a click
 * in the sidebar does) and returns the time to the screen's mark. The app is
 * loaded on the home screen first, its overview in.
 */
async function openInApp(page, url, hash, mark, timeoutMs = 60_000, { reload = true } = {}) {
  if (reload) {
    await page.goto('about:blank');
    await page.goto(`${url}#/`);
  } else {
    await page.evaluate(() => (location.hash = '#/'));
  }
  await page.locator('.home-main').waitFor({ timeout: 30_000 });
  await page.waitForTimeout(500); // the home screen settles (its first calls answered)
  await page.evaluate((h) => {
    performance.clearMarks();
    window.__opened = performance.now();
    location.hash = h;
  }, hash);
  await page.waitForFunction((n) => performance.getEntriesByName(n).length > 0, mark, { timeout: timeoutMs, polling: 50 });
  return page.evaluate((n) => {
    const t0 = window.__opened;
    const since = (t) => Math.round(t - t0);
    const loads = performance
      .getEntriesByType('resource')
      .filter((e) => e.startTime >= t0)
      .map((e) => `${decodeURIComponent(e.name.split('/').pop().split('?')[0])} ${since(e.startTime)}–${since(e.responseEnd)}`);
    return { at: performance.getEntriesByName(n)[0].startTime - t0, loads };
  }, mark);
}

/**
 * cutWithoutTooltip lists text cut with an ellipsis that cannot be read
 * whole in a tooltip (no title on it or around it), as the 800 px journey
 * checks on small data (tests/e2e/layout.test.mjs), here on the large data.
 */
async function cutWithoutTooltip(page) {
  return page.evaluate(() =>
    [...document.querySelectorAll('main .ellipsis, main [class*="ellipsis"]')]
      .filter((e) => e.scrollWidth > e.clientWidth + 1)
      .filter((e) => !e.closest('[title]'))
      .map((e) => `${e.tagName.toLowerCase()}.${[...e.classList].join('.')}: ${e.textContent.slice(0, 40)}`),
  );
}

/** reportCut checks the screen on show at 1440 and 800 px wide for cut text without a tooltip. */
async function reportCut(page, screen, show) {
  const found = [];
  for (const width of [1440, 800]) {
    await page.setViewportSize({ width, height: 900 });
    await show();
    const cut = await cutWithoutTooltip(page);
    found.push(`${width} px: ${cut.length}${cut.length ? ` (${cut.slice(0, 3).join('; ')})` : ''}`);
  }
  await page.setViewportSize({ width: 1440, height: 900 });
  report(`${screen}: text cut without a tooltip`, found.join(', '), '0', found.every((f) => /^\d+ px: 0$/.test(f)));
}

/** frames records the page's frame times while fn runs. */
async function frames(page, fn) {
  await page.evaluate(() => {
    window.__frames = [];
    let last = performance.now();
    const tick = (t) => {
      window.__frames.push(t - last);
      last = t;
      if (window.__recording) requestAnimationFrame(tick);
    };
    window.__recording = true;
    requestAnimationFrame(tick);
  });
  await fn();
  return page.evaluate(() => {
    window.__recording = false;
    return window.__frames.slice(1);
  });
}

/**
 * measureDeliberation is the issue's deliberation goals: one round of 1,000
 * branches with a horizon of 20 on the Branching Grid (`ducklm world
 * deliberate`, every branch a recorded fork) in ≤ 10 s, and the lineage
 * holding that search opened in the window in ≤ 2 s.
 */
async function measureDeliberation(work) {
  const home = path.join(work, 'deliberation');
  const env = { ...process.env, DUCKLM_HOME: home };
  const run = promisify(execFile);
  const created = JSON.parse((await run(BIN, ['world', 'new', '--example', 'branching_grid', '--seed', '1', '--name', 'grid', '--json'], { env })).stdout);
  const runId = created.run.id;
  // One seed walks all 20 levels but runs out of new states before 1,000
  // branches (duplicates merge); two seeds spend the whole budget. Both
  // rounds stay in the lineage measured below.
  for (const seeds of ['1', '2']) {
    console.error(`deliberation: a 1,000-branch round, depth 20, ${seeds} seed(s)…`);
    const started = performance.now();
    const { stdout } = await run(
      BIN,
      ['world', 'deliberate', runId, '--strategy', 'beam', '--width', '26', '--depth', '20', '--budget', '1000', '--seeds', seeds, '--json'],
      { env, maxBuffer: 64 << 20, timeout: 600_000 },
    );
    const seconds = (performance.now() - started) / 1000;
    const budget = JSON.parse(stdout).rounds[0].budget;
    report(
      `deliberation: ducklm world deliberate, beam width 26, depth 20, ${seeds} seed(s): ${budget.used} of 1000 branches recorded, deepest ${budget.depth} (the process, start to end)`,
      `${seconds.toFixed(1)} s (search ${(budget.wallMs / 1000).toFixed(1)} s)`,
      '≤ 10 s',
      seconds <= 10,
    );
  }
  const { child, url } = await serve(home);
  const ctx = await browser(work);
  try {
    const page = await ctx.newPage();
    await page.goto(url);
    await page.waitForSelector('.sidebar, nav', { timeout: 30_000 }).catch(() => {});
    await page.goto('about:blank');
    await page.goto(`${url}#/lineage`);
    const drawn = await markTime(page, 'lineage:drawn', 120_000);
    report(
      `deliberation: the lineage of those two searches (${drawn.detail.worlds} worlds) laid out and first drawn, from a cold page load`,
      ms(drawn.at),
      '≤ 2000 ms',
      drawn.at <= 2000,
    );
    const inApp = await openInApp(page, url, '#/lineage', 'lineage:drawn', 120_000);
    report('deliberation: that lineage opened from the home screen', ms(inApp.at), '≤ 2000 ms', inApp.at <= 2000);
    await page.screenshot({ path: path.join(REPO, 'tests', 'artifacts', 'perf-deliberation-lineage.png') });
  } finally {
    await ctx.close();
    await child.stop();
  }
}

async function measureLineage(work) {
  const home = path.join(work, 'lineage');
  console.error(`lineage: generating ${WORLDS} worlds…`);
  const g = await gen(home, ['lineage', '--worlds', String(WORLDS)]);
  report(`gen lineage --worlds ${WORLDS}`, `${g.seconds.toFixed(1)} s${g.reused ? ' (generated by an earlier run, reused)' : ''}`);
  const { child, url } = await serve(home);
  const ctx = await browser(work);
  try {
    const page = await ctx.newPage();
    // Warm the browser's cache of the app's files: the measured load is the
    // lineage's, not the first download of the bundle.
    await page.goto(url);
    await page.waitForSelector('.sidebar, nav', { timeout: 30_000 }).catch(() => {});
    // A new document, so the marks count from this navigation.
    await page.goto('about:blank');
    await page.goto(`${url}#/lineage`);
    const drawn = await markTime(page, 'lineage:drawn', 120_000);
    const loaded = await markTime(page, 'lineage:loaded');
    const laid = await markTime(page, 'lineage:laid-out');
    report(`lineage: ${drawn.detail.worlds} worlds laid out (${drawn.detail.engine}) and first drawn, from a cold page load`, ms(drawn.at), '≤ 2000 ms', drawn.at <= 2000);
    await page.screenshot({ path: path.join(REPO, 'tests', 'artifacts', 'perf-lineage-fit.png') });
    const call = await page.evaluate(() => {
      const r = performance.getEntriesByType('resource').find((e) => e.name.includes('/api/call/Lineage'));
      const nav = performance.getEntriesByType('navigation')[0];
      return r && { start: r.startTime, end: r.responseEnd, bytes: r.encodedBodySize, dom: nav?.domContentLoadedEventEnd ?? 0 };
    });
    report(
      'lineage: where that time went',
      `page ready ${ms(call?.dom ?? 0)}, Lineage call ${ms(call?.start ?? 0)}–${ms(call?.end ?? 0)} (${mb((call?.bytes ?? 0) / 1024)}), ` +
        `model built ${ms(loaded.at)}, laid out ${ms(laid.at)} (layout itself ${ms(laid.detail.ms)}), drawn ${ms(drawn.at)} (${drawn.detail.drawn} in view)`,
    );

    const inApp = await openInApp(page, url, '#/lineage', 'lineage:drawn', 120_000);
    report(`lineage: ${drawn.detail.worlds} worlds laid out and first drawn, opened from the home screen`, ms(inApp.at), '≤ 2000 ms', inApp.at <= 2000);
    report('lineage: opened from the home screen, what it read (ms after the click)', inApp.loads.join(', '));
    const again = await openInApp(page, url, '#/lineage', 'lineage:drawn', 120_000, { reload: false });
    report('lineage: laid out and first drawn, opened again from the home screen (its code loaded)', ms(again.at), '≤ 2000 ms', again.at <= 2000);

    // What the forks' "It changed" summaries cost the load: the same
    // answer with and without them, in turns, both passed through the same
    // interception (which has a cost of its own), one of them stripped.
    const outline = await (await fetch(`${url.split('?')[0]}api/call/LineageOutline`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Ducklm-Token': new URL(url).searchParams.get('token') }, body: '[]' })).json();
    const whole = JSON.stringify(outline).length;
    const bare = JSON.stringify({ ...outline, forks: outline.forks.map(({ change, ...f }) => f) }).length;
    const withSummary = [];
    const without = [];
    const through = (strip) => async (route) => {
      const res = await route.fetch();
      const body = await res.json();
      await route.fulfill({ response: res, json: strip ? { ...body, forks: body.forks.map(({ change, ...f }) => f) } : body });
    };
    for (let i = 0; i < 3; i++) {
      for (const [strip, into] of [
        [false, withSummary],
        [true, without],
      ]) {
        await page.route('**/api/call/LineageOutline', through(strip));
        into.push((await openInApp(page, url, '#/lineage', 'lineage:drawn', 120_000)).at);
        await page.unroute('**/api/call/LineageOutline');
      }
    }
    const withMs = quantile(withSummary, 0.5);
    const withoutMs = quantile(without, 0.5);
    report(
      `lineage: the forks' change summaries (${outline.forks.filter((f) => f.change).length} of ${outline.forks.length} forks), what they cost the load`,
      `outline ${(whole / 1024).toFixed(0)} kB with, ${(bare / 1024).toFixed(0)} kB without (+${(((whole - bare) / bare) * 100).toFixed(1)} %); ` +
        `drawn from the home screen in ${ms(withMs)} with, ${ms(withoutMs)} without (both intercepted; medians of 3, in turns: ${withSummary.map(ms).join(', ')} / ${without.map(ms).join(', ')})`,
      '≤ 2000 ms with',
      withMs <= 2000,
    );

    // The Worlds screen reads its list a page at a time, not the lineage.
    const list = await openInApp(page, url, '#/worlds', 'worlds:listed', 60_000, { reload: false });
    const listCall = await page.evaluate(() => {
      const r = performance.getEntriesByType('resource').filter((e) => e.name.includes('/api/call/ListWorlds')).pop();
      return r ? r.encodedBodySize : 0;
    });
    const shown = await page.locator('[data-testid=world-count]').textContent();
    report(`worlds: the list (${shown.trim()}) shown, opened from the home screen`, `${ms(list.at)} (ListWorlds answered ${(listCall / 1024).toFixed(0)} kB)`, '≤ 500 ms', list.at <= 500);
    report('worlds: opened from the home screen, what it read (ms after the click)', list.loads.join(', '));
    const listAgain = await openInApp(page, url, '#/worlds', 'worlds:listed', 60_000, { reload: false });
    report('worlds: the list shown, opened again from the home screen (its code loaded)', ms(listAgain.at), '≤ 500 ms', listAgain.at <= 500);
    await reportCut(page, 'worlds (the list of all worlds)', () => page.locator('[data-testid=world-count]').waitFor());
    await page.evaluate(() => (location.hash = '#/lineage'));
    await page.locator('.lineage-canvas').waitFor({ timeout: 120_000 });
    // A world selected: its card holds the longest names and the fork's change.
    await reportCut(page, 'lineage (a forked world selected)', async () => {
      const find = page.getByRole('searchbox', { name: 'Search worlds by id or name' });
      await find.fill('branch');
      await find.press('ArrowDown');
      await page.getByRole('region', { name: /^Selected world/ }).first().waitFor({ timeout: 30_000 });
    });

    const box = await page.locator('.lineage-canvas').boundingBox();
    const cx = box.x + box.width / 2;
    const cy = box.y + box.height / 2;
    const dt = await frames(page, async () => {
      await page.mouse.move(cx, cy);
      await page.mouse.down();
      for (let i = 1; i <= 60; i++) await page.mouse.move(cx + i * 6, cy + Math.sin(i / 6) * 80);
      await page.mouse.up();
      // Ctrl and the wheel zoom (the wheel alone scrolls).
      await page.keyboard.down('Control');
      for (let i = 0; i < 25; i++) await page.mouse.wheel(0, -120); // zoom in (labels come in)
      for (let i = 0; i < 40; i++) await page.mouse.wheel(0, 120); // and back out past the fit
      await page.keyboard.up('Control');
      await page.mouse.down();
      for (let i = 1; i <= 60; i++) await page.mouse.move(cx - i * 5, cy - i * 3);
      await page.mouse.up();
    });
    const p50 = quantile(dt, 0.5);
    const p95 = quantile(dt, 0.95);
    report(
      `lineage: frames while panning and zooming (${dt.length} frames)`,
      `median ${ms(p50)}, p95 ${ms(p95)}, worst ${ms(Math.max(...dt))}, ${dt.filter((x) => x > 50).length} over 50 ms`,
      'p95 ≤ 50 ms',
      p95 <= 50,
    );
    const drawnNow = await page.locator('.canvas-tools .mono').textContent();
    report('lineage: after the pan and zoom', drawnNow.trim());
    await page.screenshot({ path: path.join(REPO, 'tests', 'artifacts', 'perf-lineage.png') });
  } finally {
    await ctx.close();
    await child.stop();
  }
}

async function measureTimeline(work) {
  const home = path.join(work, 'events');
  console.error(`timeline: generating a world of ${EVENTS} events…`);
  const g = await gen(home, ['events', '--events', String(EVENTS)]);
  report(
    `gen events --events ${EVENTS}`,
    `${g.seconds.toFixed(1)} s (${g.out.events} events, ${g.out.inherited} inherited)${g.reused ? ' (generated by an earlier run, reused)' : ''}`,
    '< 60 s',
    g.seconds < 60,
  );
  const { child, url } = await serve(home);
  const ctx = await browser(work);
  try {
    const page = await ctx.newPage();
    await page.goto(url);
    await page.waitForSelector('.sidebar, nav', { timeout: 30_000 }).catch(() => {});
    await page.goto('about:blank');
    await page.goto(`${url}#/timeline/${g.out.run}`);
    const first = await markTime(page, 'timeline:rows', 60_000);
    report(`timeline: first rows painted, from a cold page load (${first.detail.total} events)`, ms(first.at), '≤ 300 ms', first.at <= 300);
    const read = await markTime(page, 'timeline:history');
    const calls = await page.evaluate(() => {
      const nav = performance.getEntriesByType('navigation')[0];
      const api = performance
        .getEntriesByType('resource')
        .filter((e) => e.name.includes('/api/call/'))
        .map((e) => `${e.name.split('/api/call/')[1]} ${Math.round(e.startTime)}–${Math.round(e.responseEnd)}`);
      return { dom: nav?.domContentLoadedEventEnd ?? 0, api };
    });
    report('timeline: where that time went', `page ready ${ms(calls.dom)}, calls ${calls.api.join(', ')}, pages read ${ms(read.at)}, rows painted ${ms(first.at)}`);
    const inApp = await openInApp(page, url, `#/timeline/${g.out.run}`, 'timeline:rows');
    report('timeline: first rows painted, opened from the home screen', ms(inApp.at), '≤ 300 ms', inApp.at <= 300);
    report('timeline: opened from the home screen, what it read (ms after the click)', inApp.loads.join(', '));
    const again = await openInApp(page, url, `#/timeline/${g.out.run}`, 'timeline:rows', 60_000, { reload: false });
    report('timeline: first rows painted, opened again from the home screen (its code loaded)', ms(again.at), '≤ 300 ms', again.at <= 300);
    report('timeline: opened again, what it read (ms after the click)', again.loads.join(', '));
    const rowsIn = () => page.evaluate(() => document.querySelectorAll('[data-testid="timeline-row"], [data-testid="timeline-pending"]').length);
    const before = await rowsIn();

    // Scroll: wheel up through the newest rows, then drag the scrollbar's
    // worth to the middle and to the top, counting the rows in the DOM.
    const scroller = page.locator('.tl-scroll');
    const sb = await scroller.boundingBox();
    await page.mouse.move(sb.x + sb.width / 2, sb.y + sb.height / 2);
    const during = [];
    const dt = await frames(page, async () => {
      for (let i = 0; i < 60; i++) {
        await page.mouse.wheel(0, -600);
        if (i % 10 === 0) during.push(await rowsIn());
      }
      for (const f of [0.5, 0.25, 0.75, 0]) {
        await scroller.evaluate((el, frac) => (el.scrollTop = el.scrollHeight * frac), f);
        await page.waitForTimeout(50);
        during.push(await rowsIn());
      }
    });
    // The rows at the top are read: wait for the page there, then count.
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="timeline-pending"]').length === 0, null, { timeout: 30_000 });
    const after = await rowsIn();
    const top = await page.locator('[data-testid="timeline-row"]').first().getAttribute('data-seq');
    report(
      'timeline: row elements in the DOM (before / while scrolling, most / after)',
      `${before} / ${Math.max(...during)} / ${after} (of ${first.detail.total})`,
      'only rows in view',
      Math.max(before, after, ...during) < 200,
    );
    report(`timeline: frames while scrolling (${dt.length} frames)`, `median ${ms(quantile(dt, 0.5))}, p95 ${ms(quantile(dt, 0.95))}, worst ${ms(Math.max(...dt))}`);
    report('timeline: after scrolling to the top, the first row is seq', top);

    // A filter searches the whole history in the backend.
    const t = performance.now();
    await page.getByLabel('Event type').selectOption('world.checkpoint');
    await page.getByText(/ of [\d,]+ events match/).waitFor({ timeout: 60_000 });
    const matchLine = await page.getByText(/ of [\d,]+ events match/).textContent();
    report('timeline: type filter over the whole history (world.checkpoint)', `${ms(performance.now() - t)}: ${matchLine.trim()}`);

    // A text search over the whole history streams its matches: the first
    // on screen, then the end (a sparse text, so the end is the whole history).
    await page.getByLabel('Event type').selectOption('');
    for (const [text, what] of [
      ['checkpoint', 'plain text'],
      ['"level":\\s*-5\\d\\d,', 'regular expression (sparse)'],
      ['"value":\\s*7\\b', 'regular expression'],
    ]) {
      const regex = what !== 'plain text';
      const sparse = what !== 'regular expression';
      const box = page.getByRole('checkbox', { name: 'regex' });
      if ((await box.isChecked()) !== regex) await box.setChecked(regex);
      await page.evaluate(() => ['timeline:search', 'timeline:search-rows', 'timeline:search-done'].forEach((n) => performance.clearMarks(n)));
      await page.getByRole('searchbox', { name: 'Search events' }).fill(text);
      await page.getByRole('searchbox', { name: 'Search events' }).press('Enter');
      const started = await markTime(page, 'timeline:search', 10_000);
      const firstRows = await markTime(page, 'timeline:search-rows', 60_000);
      if (sparse) {
        const done = await markTime(page, 'timeline:search-done', 60_000);
        report(`timeline: ${what} search "${text}", first matches on screen`, ms(firstRows.at - started.at), '≤ 500 ms', firstRows.at - started.at <= 500);
        report(`timeline: ${what} search "${text}", the whole history searched (${done.detail.matches} matches)`, ms(done.at - started.at), '≤ 3 s', done.at - started.at <= 3000);
      } else {
        // Dense: it pauses after a screenful; "Find more" goes on to the end.
        report(`timeline: ${what} search ${text}, first matches on screen`, ms(firstRows.at - started.at), '≤ 500 ms', firstRows.at - started.at <= 500);
        const t0 = await page.evaluate(() => performance.now());
        while (!(await page.evaluate(() => performance.getEntriesByName('timeline:search-done').length > 0))) {
          const more = page.getByRole('button', { name: 'Find more' });
          if (await more.isVisible()) await more.click();
          await page.waitForTimeout(20);
        }
        const done = await markTime(page, 'timeline:search-done', 60_000);
        report(`timeline: ${what} search ${text}, to the end by Find more (${done.detail.matches} matches)`, ms(done.at - t0));
      }
    }
    const status = await page.getByTestId('search-status').textContent();
    report('timeline: the search ended with', status.trim());
    await reportCut(page, 'timeline (the 1M-event history, a search shown)', () => page.getByTestId('timeline-row').first().waitFor());
    await page.screenshot({ path: path.join(REPO, 'tests', 'artifacts', 'perf-timeline.png') });
  } finally {
    await ctx.close();
    await child.stop();
  }
}

/** tree lists pid and all its descendants, from /proc. */
function tree(root) {
  const kids = new Map();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (!kids.has(ppid)) kids.set(ppid, []);
      kids.get(ppid).push(Number(d));
    } catch {
      // The process ended while we looked.
    }
  }
  const out = [];
  const stack = [root];
  while (stack.length > 0) {
    const p = stack.pop();
    out.push(p);
    stack.push(...(kids.get(p) ?? []));
  }
  return out;
}

/** pss sums Pss (kB) over processes, from smaps_rollup, with each one's name. */
function pss(pids) {
  let total = 0;
  const parts = [];
  for (const p of pids) {
    try {
      const roll = readFileSync(`/proc/${p}/smaps_rollup`, 'utf8');
      const kb = Number(/^Pss:\s+(\d+) kB/m.exec(roll)?.[1] ?? 0);
      const name = readFileSync(`/proc/${p}/comm`, 'utf8').trim();
      total += kb;
      parts.push(`${name} ${mb(kb)}`);
    } catch {
      // Gone, or not ours to read.
    }
  }
  return { total, parts };
}

async function measureMemory(work, label, home) {
  if (!process.env.DISPLAY) {
    report(`idle memory (${label})`, 'not measured: no X display (run through scripts/perf.sh)', '≤ 260 MB', false);
    process.exitCode = 1;
    return;
  }
  const app = new Child(BIN, [], { ...process.env, DUCKLM_HOME: home, OLLAMA_HOST: '127.0.0.1:1', GDK_BACKEND: 'x11' });
  try {
    await app.waitFor(/window ready/, 120_000);
    await app.waitFor(/overview served/, 120_000);
    // Idle: the window left alone for 30 s (WebKit collects the start's
    // garbage lazily), then sampled until two readings 2 s apart agree
    // within 1%, at most a minute more. The reading at 8 s is reported too.
    let last = 0;
    let early = 0;
    let reading = { total: 0, parts: [] };
    for (let i = 0; i < 45; i++) {
      await new Promise((r) => setTimeout(r, 2000));
      reading = pss(tree(app.proc.pid));
      if (i === 3) early = reading.total;
      if (last > 0 && Math.abs(reading.total - last) / last < 0.01 && i >= 15) break;
      last = reading.total;
    }
    report(
      `idle memory on the home screen, ${label} (PSS, all processes, after 30 s or more)`,
      `${mb(reading.total)}: ${reading.parts.join(', ')} (${mb(early)} at 8 s)`,
      '≤ 260 MB',
      reading.total <= 260 * 1024,
    );
  } finally {
    await app.stop();
  }
}

function table() {
  const head = ['measurement', 'goal', 'measured', 'verdict', 'load'];
  const rows = results.map((r) => [r.what, r.goal, r.measured, r.verdict, r.load]);
  const width = head.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const line = (cells) => `| ${cells.map((c, i) => String(c).padEnd(width[i])).join(' | ')} |`;
  return [line(head), `|${width.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

async function main() {
  if (!existsSync(BIN)) throw new Error(`${BIN} does not exist: run make build (or set DUCKLM_BIN)`);
  const work = process.env.PERF_DATA ? path.resolve(process.env.PERF_DATA) : await mkdtemp(path.join(tmpdir(), 'ducklm-perf-'));
  mkdirSync(work, { recursive: true });
  console.error(`ducklm perf: ${BIN}, work in ${work}, load ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  try {
    if (ONLY.has('lineage')) await measureLineage(work);
    if (ONLY.has('deliberation')) await measureDeliberation(work);
    if (ONLY.has('timeline')) await measureTimeline(work);
    if (ONLY.has('memory')) {
      const fresh = await mkdtemp(path.join(tmpdir(), 'ducklm-fresh-'));
      await measureMemory(work, 'fresh data directory', fresh).finally(() => rm(fresh, { recursive: true, force: true }));
      if (existsSync(path.join(work, 'events'))) await measureMemory(work, `the ${EVENTS}-event data directory`, path.join(work, 'events'));
    }
  } finally {
    console.log(table());
    if (!process.env.PERF_DATA) await rm(work, { recursive: true, force: true });
    else await rm(path.join(work, 'chromium'), { recursive: true, force: true });
  }
  // Reported, not asserted: a missed goal is a line of the table, and the
  // run fails only when a measurement could not be made.
  const judged = results.filter((r) => r.verdict !== '');
  console.log(`goals met: ${judged.filter((r) => r.verdict === 'met').length} of ${judged.length} (load ${loadavg().map((x) => x.toFixed(2)).join(' ')})`);
}

await main();
