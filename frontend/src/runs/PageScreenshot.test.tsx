// @vitest-environment jsdom
import { cleanup, render, screen, waitFor } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { StepRecord } from '../bridge';
import { screenshotOf } from './PageScreenshot';
import { StepPanel } from './StepPanel';

afterEach(cleanup);

const PNG = 'data:image/png;base64,iVBORw0KGgo=';

function browserStep(output: unknown): StepRecord {
  return {
    node: { id: 'page', kind: 'tool', tool: 'browser', args: { url: 'http://127.0.0.1:8080/app' }, depends_on: [] },
    state: 'done',
    attempts: 1,
    approved: false,
    network: true,
    result: {
      step: 'page',
      attempt: 1,
      ok: true,
      exitCode: 0,
      timedOut: false,
      truncated: false,
      durationMs: 900,
      stdoutTail: 'rendered by script: the release is 2.4\n',
      sandboxed: true,
      output,
    },
  } as StepRecord;
}

describe('a browser step in the run view', () => {
  it('shows the page text and its screenshot', async () => {
    const load = vi.fn(() => Promise.resolve(PNG));
    const output = { final_url: 'http://127.0.0.1:8080/app', screenshot: { digest: 'sha256:ab', size: 10, mediaType: 'image/png' } };
    render(<StepPanel step={browserStep(output)} screenshot={load} />);
    expect(screen.getByTestId('stdout').textContent).toContain('rendered by script: the release is 2.4');
    const img = await waitFor(() => screen.getByRole('img', { name: 'Screenshot of http://127.0.0.1:8080/app' }));
    expect(img.getAttribute('src')).toBe(PNG);
    expect(load).toHaveBeenCalledWith('page');
  });

  it('says why when the screenshot cannot be read', async () => {
    const output = { final_url: 'http://x.test/', screenshot: { digest: 'sha256:ab', size: 10, mediaType: 'image/png' } };
    render(<StepPanel step={browserStep(output)} screenshot={() => Promise.reject(new Error('the blob is missing'))} />);
    await waitFor(() => expect(screen.getByText(/the blob is missing/)).toBeTruthy());
  });

  it('asks for no screenshot a step did not take', () => {
    expect(screenshotOf('browser', { final_url: 'x', error: 'refused' })).toBeUndefined();
    expect(screenshotOf('web_fetch', { screenshot: {} })).toBeUndefined();
    expect(screenshotOf('browser', { screenshot: { digest: 'd' }, final_url: 'u' })).toEqual({ finalUrl: 'u' });
  });
});
