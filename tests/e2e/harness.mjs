// The end-to-end harness: a fake Ollama (tests/e2e/fakeollama, scripted by
// ollama-script.json), the built `ducklm serve` on a fresh data directory
// pointed at it, and Debian's Chromium driven by playwright-core. It builds
// nothing of ducklm itself: `make test-e2e` builds build/bin/ducklm and sets
// DUCKLM_BIN.
//
// A journey is one `*.test.mjs` file in this folder: it starts a stack in
// `before`, drives pages with accessible names and data-* attributes, and
// saves a screenshot of what a person would see to tests/artifacts/e2e-*.png.
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { chromium } from 'playwright-core';

export const E2E_DIR = path.dirname(fileURLToPath(import.meta.url));
export const REPO = path.resolve(E2E_DIR, '..', '..');
export const ARTIFACTS = path.join(REPO, 'tests', 'artifacts');
export const SCRIPT = path.join(E2E_DIR, 'ollama-script.json');

const CHROMIUM = process.env.CHROMIUM_BIN ?? '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/** The one line `ducklm serve` prints to stdout (backend/cli/serve.go). */
export const SERVING_LINE = /^ducklm serving on (http:\/\/127\.0\.0\.1:\d+\/)\?token=([0-9a-f]{32})$/;
const OLLAMA_LINE = /^ollamatest listening on (http:\/\/\S+)$/;
const REAL_OLLAMA_LINE = /^realollama listening on (http:\/\/\S+)$/;
const PG_LINE = /^pgserver listening on (postgres:\/\/\S+)$/;

function ducklmBin() {
  const bin = process.env.DUCKLM_BIN;
  if (!bin) throw new Error('DUCKLM_BIN is not set: run `make test-e2e`, which builds build/bin/ducklm and sets it');
  if (!existsSync(bin)) throw new Error(`DUCKLM_BIN names ${bin}, which does not exist: run make build`);
  return bin;
}

/** fakeOllamaBin builds the fake Ollama once per test file (the Go build cache makes it quick). */
async function fakeOllamaBin(dir) {
  if (process.env.FAKE_OLLAMA_BIN) return process.env.FAKE_OLLAMA_BIN;
  const out = path.join(dir, 'fakeollama');
  await promisify(execFile)('go', ['build', '-o', out, './tests/e2e/fakeollama'], { cwd: REPO, timeout: 120_000 });
  return out;
}

/**
 * realOllamaBin is tests/realmodel/cmd/realollama: a real Ollama server with
 * ducklm's tiny test models (make test-e2e builds it and sets
 * REAL_OLLAMA_BIN, and DUCKLM_OLLAMA_BIN to the server it runs).
 */
async function realOllamaBin(dir) {
  if (process.env.REAL_OLLAMA_BIN) return process.env.REAL_OLLAMA_BIN;
  const out = path.join(dir, 'realollama');
  await promisify(execFile)('go', ['build', '-o', out, './tests/realmodel/cmd/realollama'], { cwd: REPO, timeout: 300_000 });
  return out;
}

/**
 * startPostgres starts a throw-away PostgreSQL (tests/e2e/pgserver: a
 * cluster in a temporary folder on a free loopback port) whose database
 * "ducklm" belongs to a role that logs in with password. It answers the
 * address without the password, withPassword (the address a program is
 * given) and stop(). `make test-e2e` builds it and sets PG_SERVER_BIN.
 */
export async function startPostgres(password) {
  let bin = process.env.PG_SERVER_BIN;
  const work = await mkdtemp(path.join(tmpdir(), 'ducklm-e2e-pg-'));
  if (!bin) {
    bin = path.join(work, 'pgserver');
    await promisify(execFile)('go', ['build', '-o', bin, './tests/e2e/pgserver'], { cwd: REPO, timeout: 180_000 });
  }
  const pg = new Child('pgserver', bin, ['-password', password], process.env);
  try {
    const [, address] = await pg.ready(PG_LINE, 120_000);
    const u = new URL(address);
    u.password = encodeURIComponent(password);
    return {
      address,
      withPassword: u.toString(),
      async stop() {
        await pg.stop(60_000);
        await rm(work, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await pg.stop();
    await rm(work, { recursive: true, force: true });
    throw err;
  }
}

/** Children still running, killed if this process exits without stopping them. */
const live = new Set();
process.on('exit', () => {
  for (const c of live) c.proc.kill('SIGKILL');
});

/**
 * A child process whose first stdout line matching `ready` is awaited. Its
 * output is kept for the failure message.
 */
class Child {
  constructor(name, cmd, args, env) {
    this.name = name;
    this.output = '';
    this.proc = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    live.add(this);
    this.exited = new Promise((resolve) =>
      this.proc.once('exit', (code, signal) => {
        live.delete(this);
        resolve({ code, signal });
      }),
    );
    this.proc.stderr.on('data', (d) => (this.output += d));
  }

  /** ready resolves with the match of the first stdout line that matches re. */
  ready(re, timeoutMs = 30_000) {
    return new Promise((resolve, reject) => {
      let buf = '';
      const timer = setTimeout(() => reject(new Error(`${this.name} printed no ready line within ${timeoutMs} ms:\n${this.output}`)), timeoutMs);
      this.proc.stdout.on('data', (d) => {
        this.output += d;
        buf += d;
        let nl;
        while ((nl = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + 1);
          const m = re.exec(line);
          if (m) {
            clearTimeout(timer);
            resolve(m);
          }
        }
      });
      this.exited.then(({ code, signal }) => {
        clearTimeout(timer);
        reject(new Error(`${this.name} exited (${code ?? signal}) before it was ready:\n${this.output}`));
      });
    });
  }

  /** stop sends SIGTERM and waits, killing after a grace period. */
  async stop(graceMs = 10_000) {
    if (this.proc.exitCode !== null || this.proc.signalCode !== null) return this.exited;
    this.proc.kill('SIGTERM');
    const timer = setTimeout(() => this.proc.kill('SIGKILL'), graceMs);
    const res = await this.exited;
    clearTimeout(timer);
    return res;
  }
}

/**
 * startWorker starts `ducklm worker` on its own data directory for the
 * database at databaseUrl (password included), as a team's machine does.
 * Stop it with stop() (SIGTERM: it leaves the queue cleanly) or kill().
 */
export async function startWorker(databaseUrl, slots = 2) {
  const home = await mkdtemp(path.join(tmpdir(), 'ducklm-e2e-worker-'));
  const w = new Child('ducklm worker', ducklmBin(), ['worker', '--slots', String(slots)], {
    ...process.env,
    DUCKLM_HOME: home,
    DUCKLM_DATABASE_URL: databaseUrl,
    OLLAMA_HOST: 'http://127.0.0.1:9',
  });
  w.proc.stdout.on('data', (d) => (w.output += d));
  return {
    get output() {
      return w.output;
    },
    async stop() {
      const res = await w.stop(30_000);
      await rm(home, { recursive: true, force: true });
      return res;
    },
  };
}

/**
 * startStack starts a fake Ollama (or with realOllama a real one serving the
 * tiny test models: "tiny", "tiny-random", "tiny-loop", "tiny-endless"),
 * `ducklm serve` on a fresh data directory and a browser with a fresh
 * profile. With noOllama, no Ollama at all: ducklm is pointed at a
 * loopback port nothing listens on. Stop it with stack.stop().
 */
export async function startStack({ script = SCRIPT, realOllama = false, noOllama = false, env: extraEnv = {} } = {}) {
  const work = await mkdtemp(path.join(tmpdir(), 'ducklm-e2e-'));
  const home = path.join(work, 'home');
  const children = [];
  let context;
  const stop = async () => {
    await context?.close().catch(() => {});
    const results = [];
    for (const c of children.reverse()) results.push(await c.stop());
    await rm(work, { recursive: true, force: true });
    return results;
  };
  try {
    // The browser starts while the servers do: it needs neither yet.
    const browser = chromium
      .launchPersistentContext(path.join(work, 'chromium'), {
        executablePath: CHROMIUM,
        headless: true,
        args: CHROMIUM_ARGS,
        viewport: { width: 1280, height: 860 },
        reducedMotion: 'reduce',
      })
      .then((c) => (context = c));
    const servers = (async () => {
      let ollamaUrl;
      if (noOllama) {
        ollamaUrl = 'http://127.0.0.1:9'; // the discard port: refused on loopback
      } else if (realOllama) {
        const ollama = new Child('realollama', await realOllamaBin(work), [], process.env);
        children.push(ollama);
        [, ollamaUrl] = await ollama.ready(REAL_OLLAMA_LINE, 180_000);
      } else {
        const ollama = new Child('fakeollama', await fakeOllamaBin(work), ['-addr', '127.0.0.1:0', '-script', script], process.env);
        children.push(ollama);
        [, ollamaUrl] = await ollama.ready(OLLAMA_LINE);
      }
      const env = { ...process.env, DUCKLM_HOME: home, OLLAMA_HOST: ollamaUrl, ...extraEnv };
      const serve = new Child('ducklm serve', ducklmBin(), ['serve', '--addr', '127.0.0.1:0'], env);
      children.push(serve);
      const [, base, token] = await serve.ready(SERVING_LINE);
      return { ollamaUrl, serve, base, token, env };
    })();
    // Both settle before a failure is thrown, so stop() finds everything started.
    const settled = await Promise.allSettled([browser, servers]);
    const failed = settled.find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
    const { ollamaUrl, serve, base, token, env } = settled[1].value;
    const stack = {
      home,
      base,
      token,
      url: `${base}?token=${token}`,
      ollamaUrl,
      context,
      serve,
      stop,
      /**
       * restart stops `ducklm serve` and starts it again on the same data
       * directory (a new address and token), as a person quits and opens ducklm.
       */
      async restart() {
        const old = stack.serve;
        await old.stop();
        children.splice(children.indexOf(old), 1);
        const serve = new Child('ducklm serve', ducklmBin(), ['serve', '--addr', '127.0.0.1:0'], env);
        children.push(serve);
        const [, nextBase, nextToken] = await serve.ready(SERVING_LINE);
        Object.assign(stack, { serve, base: nextBase, token: nextToken, url: `${nextBase}?token=${nextToken}` });
      },
      /** call invokes an API method from the test, as the page would. */
      async call(method, ...args) {
        const res = await fetch(`${stack.base}api/call/${method}`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', 'X-Ducklm-Token': stack.token },
          body: JSON.stringify(args),
        });
        const body = await res.json();
        if (!res.ok) throw new Error(`${method}: HTTP ${res.status}: ${body.error}`);
        return body;
      },
      /** open loads the page with its token in a new tab, recording what goes wrong in it. */
      async open() {
        const page = await context.newPage();
        const problems = [];
        page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
        page.on('console', (m) => {
          // A failed request is reported below, with its address.
          if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) problems.push(`console: ${m.text()}`);
        });
        // Every request the server refused, the favicon the browser asks for on its own included.
        // The last answers are kept too: a failed journey prints them with what the page showed.
        const opened = Date.now();
        const recent = [];
        page.on('response', (r) => {
          if (r.status() >= 400) problems.push(`HTTP ${r.status()} for ${r.request().method()} ${new URL(r.url()).pathname}`);
          const path = new URL(r.url()).pathname;
          if (/\.(js|css|svg|png|woff2?|ico)$/.test(path)) return;
          recent.push(`+${Date.now() - opened} ms ${r.status()} ${r.request().method()} ${path} ${(r.request().postData() ?? '').slice(0, 120)}`);
          if (recent.length > 40) recent.shift();
        });
        page.recent = recent;
        // And every request that got no answer (refused connection, blocked by the CSP…), which the
        // console filter above would hide; an abort is the page's own doing (a reload, a closed stream).
        page.on('requestfailed', (r) => {
          const why = r.failure()?.errorText ?? 'failed';
          if (why !== 'net::ERR_ABORTED') problems.push(`request failed (${why}) for ${r.method()} ${new URL(r.url()).pathname}`);
        });
        page.problems = problems;
        page.allowed = [];
        /** allowProblem lets one expected problem (a refused request the journey provokes) pass the step checks. */
        page.allowProblem = (re) => page.allowed.push(re);
        watchSteps(page);
        await page.goto(stack.url);
        // Headless Chromium never asks for the tab's icon, so a missing one (a 404 in every
        // headed session) is asked for here, as a browser would: the page's <link rel=icon>,
        // else /favicon.ico.
        const icon = await page.evaluate(() => document.querySelector('link[rel~="icon"]')?.href || new URL('/favicon.ico', location.href).href);
        const answer = await page.request.get(icon);
        if (!answer.ok()) problems.push(`HTTP ${answer.status()} for GET ${new URL(icon).pathname} (the page's icon)`);
        return page;
      },
      /**
       * waitFor polls an API call until check(result) is true; the value is
       * returned.
       */
      async waitFor(what, method, args, check, timeoutMs = 30_000) {
        const deadline = Date.now() + timeoutMs;
        let last;
        while (Date.now() < deadline) {
          last = await stack.call(method, ...args);
          if (check(last)) return last;
          await new Promise((r) => setTimeout(r, 150));
        }
        throw new Error(`${what}: not within ${timeoutMs} ms; last answer: ${JSON.stringify(last).slice(0, 600)}`);
      },
    };
    return stack;
  } catch (err) {
    await stop();
    throw err;
  }
}

/**
 * The step checks. Every action a journey takes on a page it opened with
 * stack.open() — a click, a key, a fill, a navigation — is followed by the
 * acceptance's two checks: no console error, page error or failed request
 * so far, and a screen that is not blank (the app's root shows text within
 * STEP_BLANK_MS) and not a screen's error boundary. A journey therefore
 * fails at the step that broke the window, not at its end.
 */
const STEP_ACTIONS = ['click', 'dblclick', 'fill', 'press', 'pressSequentially', 'check', 'uncheck', 'setChecked', 'selectOption', 'hover', 'dispatchEvent', 'setInputFiles'];
const STEP_BLANK_MS = 30_000; // generous: a loaded CI machine draws late, a blank screen stays blank
const watched = new WeakSet();
let locatorPatched = false;

/** unexpected is the page's problems that no allowProblem expects. */
function unexpected(page) {
  return page.problems.filter((p) => !page.allowed.some((re) => re.test(p)));
}

/**
 * checkStep fails when the page has an unexpected problem, shows a screen's
 * error boundary, or stays blank; what names the step in the failure.
 */
export async function checkStep(page, what) {
  if (page.isClosed() || !watched.has(page)) return;
  const bad = unexpected(page);
  assert.deepEqual(bad, [], `after ${what}: the page reported problems`);
  const state = await page
    .waitForFunction(
      () => {
        const root = document.getElementById('root');
        if (!root) return 'no-app'; // not ducklm's page (a download, about:blank): nothing to check
        if (document.querySelector('[data-testid="screen-error"]')) return 'boundary';
        return root.innerText.trim().length > 0 ? 'drawn' : false;
      },
      null,
      { timeout: STEP_BLANK_MS, polling: 100 },
    )
    .then((h) => h.jsonValue())
    .catch((err) => (page.isClosed() ? 'closed' : /Execution context was destroyed|navigation/i.test(err.message) ? 'navigating' : 'blank'));
  if (state === 'navigating') return checkStep(page, what);
  assert.notEqual(state, 'blank', `after ${what}: the screen stayed blank for ${STEP_BLANK_MS / 1000} s`);
  const shown = state === 'boundary' ? await page.getByTestId('screen-error').innerText().catch(() => '') : '';
  assert.notEqual(state, 'boundary', `after ${what}: a screen's error boundary is shown: ${shown.slice(0, 400)}`);
  assert.deepEqual(unexpected(page), [], `after ${what}: the page reported problems`);
}

/** watchSteps makes every action on page (and on its locators) run checkStep after it. */
function watchSteps(page) {
  watched.add(page);
  const wrap = (obj, name, label) => {
    const orig = obj[name];
    obj[name] = async function (...args) {
      const out = await orig.apply(this, args);
      await checkStep(page, label(args));
      return out;
    };
  };
  wrap(page, 'goto', (a) => `opening ${String(a[0]).replace(/token=[0-9a-f]+/, 'token=…')}`);
  wrap(page, 'reload', () => 'reloading');
  wrap(page, 'goBack', () => 'going back');
  for (const k of ['press', 'type', 'insertText']) wrap(page.keyboard, k, (a) => `keyboard ${k} ${JSON.stringify(a[0])}`);
  for (const k of ['click', 'dblclick', 'wheel']) wrap(page.mouse, k, (a) => `mouse ${k} ${JSON.stringify(a.slice(0, 2))}`);
  if (!locatorPatched) {
    locatorPatched = true;
    const proto = Object.getPrototypeOf(page.locator('body'));
    for (const name of STEP_ACTIONS) {
      const orig = proto[name];
      proto[name] = async function (...args) {
        const out = await orig.apply(this, args);
        const owner = this.page();
        if (watched.has(owner)) await checkStep(owner, `${name} on ${this.toString()}`);
        return out;
      };
    }
  }
}

/** screenshot saves the page to tests/artifacts/e2e-NAME.png. */
export async function screenshot(page, name) {
  await mkdir(ARTIFACTS, { recursive: true });
  const file = path.join(ARTIFACTS, `e2e-${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/**
 * journey runs fn(page) as a person's path through the app and always
 * leaves a screenshot: e2e-NAME.png on success, e2e-NAME-failed.png with the
 * page's errors attached to the failure otherwise.
 */
export async function journey(stack, name, fn) {
  const page = await stack.open();
  // A page that cannot reach the server fails at once with the fix, not
  // after a selector times out.
  const unreachable = page
    .getByText(UNREACHABLE_TEXT)
    .first()
    .waitFor({ timeout: 0 })
    .then(() => assert.fail(UNREACHABLE_HINT));
  try {
    await Promise.race([fn(page), unreachable]);
    await checkStep(page, `the end of ${name}`);
    await screenshot(page, name);
  } catch (err) {
    const file = await screenshot(page, `${name}-failed`).catch(() => '(no screenshot)');
    const problems = page.problems.length ? `\npage problems:\n${page.problems.join('\n')}` : '';
    // What the page showed and asked last: a flake on a loaded CI machine is read from these.
    const shown = await page
      .evaluate(() => `${location.hash}\n${(document.querySelector('main')?.innerText ?? '').slice(0, 2000)}`)
      .catch(() => '(the page could not be read)');
    const asked = page.recent?.length ? `\nthe page's last requests:\n${page.recent.join('\n')}` : '';
    err.message += `\nscreenshot: ${file}${problems}\nthe page showed: ${shown}${asked}\nducklm serve stderr (tail):\n${stack.serve.output.slice(-3000)}`;
    throw err;
  } finally {
    await page.close().catch(() => {});
  }
}

/**
 * appReady waits until the page shows ducklm (the Home screen's data
 * location, or any screen's sections navigation), and fails with the fix
 * when the page could not reach the server.
 */
export async function appReady(page) {
  const shown = page.getByRole('region', { name: 'Data location' }).or(page.getByRole('navigation', { name: 'Sections' }));
  await Promise.race([
    shown.first().waitFor(),
    page
      .getByText(UNREACHABLE_TEXT)
      .first()
      .waitFor()
      .then(() => assert.fail(UNREACHABLE_HINT)),
  ]);
}

/** go opens a screen by its hash route (e.g. "#/new"), with the page's token. */
export async function go(stack, page, hash) {
  await page.goto(`${stack.url}${hash}`);
  await appReady(page);
}

/** A one-step explicit plan, as the task form sends it (JSON text). */
export function shellPlan(command, title = command) {
  return JSON.stringify({
    nodes: [{ id: 'step-1', kind: 'tool', tool: 'shell_exec', args: { command }, depends_on: [], title }],
  });
}

/** What a page says when no transport reaches the server (bridge/errors.ts UNREACHABLE). */
const UNREACHABLE_TEXT = "ducklm's backend is not reachable";

/**
 * UNREACHABLE_HINT explains the one failure that is not a bug of the
 * journey: a page that did not pick the HTTP transport.
 */
export const UNREACHABLE_HINT =
  "the page says ducklm's backend is not reachable: frontend/src/bridge/index.ts must list the http transport (bridge/http.ts)";
