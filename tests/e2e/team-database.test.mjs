// Journeys of a team's database: in Settings, type the address of a
// PostgreSQL (a throw-away cluster, tests/e2e/pgserver) and its password,
// see "Test connection" refuse a wrong password and then answer with the
// server's version, choose it for the next start, restart ducklm and find it
// in use, with the password never shown back.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { appReady, go, journey, startPostgres, startStack } from './harness.mjs';

const PASSWORD = 'team pass-phrase';

describe('Team database', { timeout: 300_000 }, () => {
  let pg;
  let stack;
  before(async () => {
    [pg, stack] = await Promise.all([startPostgres(PASSWORD), startStack()]);
  });
  after(async () => {
    await stack?.stop();
    await pg?.stop();
  });

  it('tests the connection, refuses a wrong password, and keeps the address for the next start', async () => {
    await journey(stack, 'team-database-settings', async (page) => {
      await appReady(page);
      await go(stack, page, '#/settings');
      const section = page.getByRole('region', { name: 'Database' });
      await section.getByText('This machine (SQLite)').waitFor();
      assert.equal(await section.getByTestId('database-in-use').textContent(), path.join(stack.home, 'ducklm.db'));

      await section.getByLabel('Database address').fill(pg.address);
      await section.getByLabel('Database password').fill('not the password');
      await section.getByRole('button', { name: 'Test the database connection' }).click();
      await section.getByTestId('database-unreachable').getByText(`PostgreSQL at ${pg.address} refused the password of user ducklm_password; check the password.`).waitFor();

      await section.getByLabel('Database password').fill(PASSWORD);
      await section.getByRole('button', { name: 'Test the database connection' }).click();
      const reachable = section.getByTestId('database-reachable');
      await reachable.waitFor();
      assert.match(await reachable.textContent(), new RegExp(`^✓ Reachable: PostgreSQL \\d+\\.\\d+ at ${escape(pg.address)}\\. Its database is empty; ducklm creates its tables \\(schema \\d+\\) when it first starts on it\\.$`));

      await section.getByRole('button', { name: 'Use at next start' }).click();
      await section.getByTestId('database-saved').getByText(`Saved. ducklm opens ${pg.address} at its next start`, { exact: false }).waitFor();
      assert.equal(await section.getByLabel('Database password').inputValue(), '', 'the password field empties once saved');
      await section.getByPlaceholder('stored; leave empty to keep it').waitFor();
      assert.ok(!(await page.content()).includes(PASSWORD), 'the password is nowhere in the page');
      assert.ok(!(await readFile(path.join(stack.home, 'settings.json'), 'utf8').catch(() => '')).includes(PASSWORD));
    });
  });

  it('opens the team database at the next start', async () => {
    await stack.restart();
    await journey(stack, 'team-database-in-use', async (page) => {
      await appReady(page);
      await go(stack, page, '#/settings');
      const section = page.getByRole('region', { name: 'Database' });
      await section.getByText('Shared (PostgreSQL)').waitFor();
      assert.equal(await section.getByTestId('database-in-use').textContent(), pg.address);
      assert.equal(await section.getByLabel('Database address').inputValue(), pg.address);
      // The stored password is used when none is typed: the schema is this ducklm's now.
      await section.getByRole('button', { name: 'Test the database connection' }).click();
      await section.getByTestId('database-reachable').getByText(", this ducklm's.", { exact: false }).waitFor();
      assert.ok(!(await page.content()).includes(PASSWORD));
      assert.deepEqual(page.problems, []);
    });
  });
});

function escape(s) {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
