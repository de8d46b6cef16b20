// Journeys through bundles: run a world in one installation, export it from
// its screen and verify the file; import it into a second installation (a
// fresh data directory whose owner does not know the first one's key), see
// that said plainly, decide, and open what arrived; and a broken file that
// gets a sentence and changes nothing. The journeys run in order.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { appReady, journey, screenshot, startStack } from './harness.mjs';

describe('Bundles between two installations', { timeout: 240_000 }, () => {
  let here;
  let there;
  let files;
  let bundle;
  let worldId;
  let runId;
  let signer;
  before(async () => {
    files = await mkdtemp(path.join(tmpdir(), 'ducklm-bundles-'));
    [here, there] = await Promise.all([startStack(), startStack()]);
  });
  after(async () => {
    await Promise.all([here?.stop(), there?.stop()]);
    if (files) await rm(files, { recursive: true, force: true });
  });

  it('exports a world from its screen and verifies the file', async () => {
    await journey(here, 'bundle-export', async (page) => {
      await appReady(page);
      await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Worlds' }).click();
      await page.getByRole('button', { name: 'Open Branching Grid' }).click();
      await page.waitForURL(/#\/worlds\/run_/);
      runId = decodeURIComponent(new URL(page.url()).hash.replace('#/worlds/', ''));
      await page.getByLabel('Steps to run').fill('4');
      await page.getByRole('button', { name: 'Run 4 steps' }).click();
      await page.getByText('world time 4').waitFor();
      await page.getByRole('button', { name: 'Checkpoint', exact: true }).click();
      await page.locator('.cp-item', { hasText: 't=4' }).waitFor();
      worldId = (await here.call('WorldDetail', runId)).world.id;

      await page.getByRole('button', { name: 'Export…' }).click();
      const dialog = page.getByRole('dialog', { name: 'Export world' });
      await dialog.waitFor();
      // A browser has no file dialog for the server's machine: the dialog says so.
      await dialog.getByText('This page runs in a browser, which has no file dialog for this machine.').waitFor();
      assert.equal(await dialog.getByRole('button', { name: 'Browse…' }).count(), 0);
      assert.ok(await dialog.getByRole('radio', { name: /^This world alone/ }).isChecked());
      assert.ok(await dialog.getByRole('radio', { name: /^With its ancestry/ }).isDisabled(), 'a world never forked has no ancestry');
      bundle = path.join(files, 'grid.ducklm');
      await dialog.getByRole('textbox', { name: 'Bundle file' }).fill(bundle);
      await dialog.getByRole('button', { name: 'Export', exact: true }).click();
      await dialog.getByText('Exported to a signed bundle.').waitFor();
      assert.equal(await dialog.getByTestId('export-file').textContent(), bundle);
      const size = (await stat(bundle)).size;
      assert.ok(size > 0);
      const facts = await dialog.locator('.bundle-facts').first().textContent();
      assert.match(facts, /1 world, 1 run, 0 forks, \d+ checkpoints?, \d+ events/);

      await dialog.getByRole('button', { name: 'Verify' }).click();
      const report = dialog.getByRole('region', { name: 'Verification report' });
      await report.getByText('This bundle checks out.').waitFor();
      const signerRow = report.locator('[data-check="Signer"]');
      assert.match(await signerRow.textContent(), /this installation's own key/);
      signer = (await signerRow.locator('.fingerprint').textContent()).trim();
      assert.match(signer, /^([0-9a-f]{4} ){15}[0-9a-f]{4}$/);
      for (const check of ['Manifest', 'Signature', 'Digests', 'References']) {
        assert.match(await report.locator(`[data-check="${check}"]`).getAttribute('class'), /check-ok/, check);
      }
      assert.deepEqual(page.problems, []);
    });
  });

  it('imports the file into another installation, which does not know the signer, and opens the world', async () => {
    assert.ok(bundle, 'the export journey ran first');
    await journey(there, 'bundle-import-opened', async (page) => {
      await appReady(page);
      await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Worlds' }).click();
      await page.getByRole('heading', { name: 'Worlds', level: 1 }).waitFor();
      await page.getByRole('button', { name: 'Import bundle…' }).click();
      const dialog = page.getByRole('dialog', { name: 'Import a bundle' });
      await dialog.getByText('This page runs in a browser, which has no file dialog for this machine.').waitFor();
      await dialog.getByRole('textbox', { name: 'Bundle file (.ducklm)' }).fill(bundle);
      await dialog.getByRole('button', { name: 'Check bundle' }).click();
      // Intact, but from a signer this installation does not know: a choice, not a green light.
      await dialog.getByText('This bundle is intact, but its signer is not one this installation trusts: importing it is your choice.').waitFor();

      // The signer is honest about being unknown here, and nothing is written yet.
      const signerRow = dialog.locator('[data-check="Signer"]');
      assert.match(await signerRow.getAttribute('class'), /check-warn/);
      assert.match(await signerRow.textContent(), /Not a key this installation trusts/);
      assert.equal((await signerRow.locator('.fingerprint').textContent()).trim(), signer, 'the same key signed it');
      const importButton = dialog.getByRole('button', { name: 'Import', exact: true });
      assert.ok(await importButton.isDisabled(), 'importing an unknown signer needs a decision');
      assert.equal((await there.call('Lineage')).nodes?.length ?? 0, 0);

      // The decision sits beside Import, where the disabled button is.
      await dialog.getByRole('group', { name: 'Your decision' }).waitFor();
      await dialog.getByTestId('trust-anyway').getByRole('checkbox', { name: /I trust where this file came from/ }).check();
      await importButton.click();
      await dialog.getByText(/^Imported: added 1 world, 1 run, 0 forks, \d+ checkpoints?/).waitFor();
      await dialog.getByText('new here').waitFor();
      const lineage = await there.call('Lineage');
      assert.deepEqual(
        lineage.nodes.map((n) => n.world.id),
        [worldId],
      );

      // What the import did, with the links to what arrived.
      await screenshot(page, 'bundle-import');

      // The Worlds screen behind the dialog lists it already; the link opens it.
      await page.getByRole('region', { name: 'Simulated worlds' }).getByText('branching_grid').waitFor();
      await dialog.getByRole('link', { name: 'branching_grid' }).click();
      await page.waitForURL(new RegExp(`#/worlds/${runId}$`));
      await page.getByText('world time 4').waitFor();
      await page.locator('.cp-item', { hasText: 't=4' }).waitFor();
      await page.getByRole('link', { name: 'Lineage', exact: true }).first().click();
      const graph = page.getByRole('group', { name: 'Lineage graph' });
      await graph.getByRole('button', { name: /^branching_grid, simulated/ }).waitFor();

      // A second import of the same file changes nothing.
      const again = await there.call('ImportBundle', { path: bundle, allowUnsigned: true, op: '' });
      assert.equal(again.imported, true);
      assert.equal(again.alreadyPresent, true);
      assert.equal((await there.call('Lineage')).nodes.length, 1);
      assert.deepEqual(page.problems, []);
    });
  });

  it('refuses a broken or altered file with a sentence and changes nothing', async () => {
    assert.ok(bundle, 'the export journey ran first');
    const broken = path.join(files, 'broken.ducklm');
    await writeFile(broken, 'these are notes, not a bundle\n');
    const altered = path.join(files, 'altered.ducklm');
    const bytes = await readFile(bundle);
    bytes[Math.floor(bytes.length / 2)] ^= 0xff;
    await writeFile(altered, bytes);
    const before = await there.call('Overview');

    await journey(there, 'bundle-broken', async (page) => {
      await appReady(page);
      const importButton = page.getByRole('region', { name: 'Runs' }).getByRole('button', { name: 'Import bundle…' });
      await importButton.waitFor();
      const buttonAt = await importButton.boundingBox();
      await importButton.click();
      const dialog = page.getByRole('dialog', { name: 'Import a bundle' });
      await dialog.waitFor();
      // The page behind the dialog stays put (the dialog once sat in the button's row and moved it 211 px).
      assert.deepEqual(await importButton.boundingBox(), buttonAt, 'the Import button moved when its dialog opened');
      const file = dialog.getByRole('textbox', { name: 'Bundle file (.ducklm)' });

      await file.fill(altered);
      await dialog.getByRole('button', { name: 'Check bundle' }).click();
      await dialog.getByText(/^This bundle cannot be imported: it failed the \w+ check\.$/).waitFor();
      const alteredProblem = await dialog.locator('.bundle-checks .check-fail .check-detail').textContent();
      assert.doesNotMatch(alteredProblem, /internal error|panic|goroutine/i, alteredProblem);
      assert.ok(await dialog.getByRole('button', { name: 'Import', exact: true }).isDisabled());

      // A path where there is no file: a sentence that starts with a capital and says what to do
      // (the API refuses it with HTTP 422 and that sentence, as it should).
      page.allowProblem(/^HTTP 422 for POST \/api\/call\/VerifyBundle$/);
      await file.fill(path.join(files, 'missing.ducklm'));
      await dialog.getByRole('button', { name: 'Check bundle' }).click();
      await dialog.getByText(/^There is no file \S+missing\.ducklm\. Check the path: a bundle is the \.ducklm file an export wrote/).first().waitFor();

      await file.fill(broken);
      await dialog.getByRole('button', { name: 'Check bundle' }).click();
      await dialog.getByText('This bundle cannot be imported: it failed the manifest check.').waitFor();
      const manifest = dialog.locator('[data-check="Manifest"]');
      assert.match(await manifest.getAttribute('class'), /check-fail/);
      assert.match(await manifest.textContent(), /The file is not a ducklm bundle/);
      await dialog.getByText(/Nothing was written/).waitFor();
      assert.ok(await dialog.getByRole('button', { name: 'Import', exact: true }).isDisabled());
      assert.deepEqual(page.problems, ['HTTP 422 for POST /api/call/VerifyBundle']);
    });
    const afterwards = await there.call('Overview');
    assert.deepEqual(afterwards.counts, before.counts, 'nothing was written');
  });
});
