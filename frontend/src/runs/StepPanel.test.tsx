// @vitest-environment jsdom
import { cleanup, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import type { Confinement, StepRecord } from '../bridge';
import { StepPanel } from './StepPanel';

afterEach(cleanup);

function finished(tool: string, sandboxed: boolean, confinement?: Confinement): StepRecord {
  return {
    node: { id: 's', kind: 'tool', tool, args: { path: 'a.txt' }, depends_on: [] },
    state: 'done',
    attempts: 1,
    approved: true,
    network: false,
    result: { step: 's', attempt: 1, ok: true, exitCode: 0, timedOut: false, truncated: false, durationMs: 3, sandboxed, confinement },
  } as StepRecord;
}

describe('where a finished step ran', () => {
  it('says ducklm itself ran a file tool, never "Sandbox yes"', () => {
    // The tools report sandboxed: true for "confined", which is not bubblewrap.
    render(<StepPanel step={finished('file_write', true, 'workspace')} />);
    expect(screen.getByTestId('step-confinement').textContent).toBe("in ducklm itself, inside the run's workspace only");
    expect(screen.queryByText('Sandbox')).toBeNull();
  });

  it('names the hosts and the world workers as the approval card does', () => {
    render(<StepPanel step={finished('web_fetch', true, 'hosts')} />);
    expect(screen.getByTestId('step-confinement').textContent).toBe('in ducklm itself, reaching only the hosts approved for it');
    cleanup();
    render(<StepPanel step={finished('world_sim', false, 'world')} />);
    expect(screen.getByTestId('step-confinement').textContent).toBe("in a world worker process, under the world's own limits");
  });

  it('says a web_fetch ran in a web worker, and whether bubblewrap held it', () => {
    render(<StepPanel step={finished('web_fetch', true, 'web_worker')} />);
    expect(screen.getByTestId('step-confinement').textContent).toBe(
      'in a web worker process, under the step\'s time and memory limits, reaching only the hosts approved for it through ducklm',
    );
    expect(screen.getByTestId('step-sandbox').textContent).toBe('bubblewrap');
    cleanup();
    render(<StepPanel step={finished('web_fetch', false, 'web_worker')} />);
    expect(screen.getByTestId('step-sandbox').textContent).toBe('none: it ran on this machine as you');
  });

  it("says a search ran on the team's workers, or here and why", () => {
    const step = finished('world_search', true, 'world');
    step.result!.placement = { workers: 2, branches: 120 };
    render(<StepPanel step={step} />);
    expect(screen.getByTestId('step-placement').textContent).toBe("on the team's workers: 120 branches on 2 workers");
    cleanup();
    step.result!.placement = { here: 'No worker of the team was alive, so its branches ran here.' };
    render(<StepPanel step={step} />);
    expect(screen.getByTestId('step-placement').textContent).toBe(
      'here, in this process. No worker of the team was alive, so its branches ran here.',
    );
    cleanup();
    render(<StepPanel step={finished('world_search', true, 'world')} />);
    expect(screen.queryByTestId('step-placement')).toBeNull();
  });

  it('says nothing of where a step ran, nor how long, when it did not run at all', () => {
    // A coder step whose script could not be written never ran: "Sandbox:
    // none, it ran on this machine as you" would be false and alarming.
    const step = finished('coder', false);
    step.state = 'failed';
    step.result = { ...step.result!, ok: false, error: 'the coder failed: the model repeated "*"', durationMs: 0 };
    render(<StepPanel step={step} />);
    expect(screen.getByText('did not run')).toBeTruthy();
    expect(screen.queryByTestId('step-confinement')).toBeNull();
    expect(screen.queryByText('Sandbox')).toBeNull();
    expect(screen.queryByText('Took')).toBeNull();
  });

  it('says whether bubblewrap held a sandboxed command', () => {
    render(<StepPanel step={finished('shell_exec', true, 'sandbox')} />);
    expect(screen.getByTestId('step-confinement').textContent).toBe('bubblewrap');
    cleanup();
    render(<StepPanel step={finished('shell_exec', false, 'sandbox')} />);
    expect(screen.getByTestId('step-confinement').textContent).toBe('none: it ran on this machine as you');
  });
});

describe('a web step', () => {
  it('shows a web_fetch by its status, final URL and type, not "Exit 0" and stdout', () => {
    const step = finished('web_fetch', true, 'hosts');
    step.result!.stdoutTail = 'Example Domain\n\nThis domain is for use in examples.\n';
    step.result!.output = {
      url: 'http://example.com/',
      final_url: 'https://example.com/',
      method: 'GET',
      status: 200,
      status_text: 'OK',
      content_type: 'text/html; charset=UTF-8',
      title: 'Example Domain',
      text: 'This domain is for use in examples.',
      text_kind: 'article',
    };
    render(<StepPanel step={step} />);
    expect(screen.getByTestId('web-status').textContent).toBe('200 OK');
    expect(screen.queryByText('Exit')).toBeNull();
    expect(screen.getByTestId('web-final-url').textContent).toBe('https://example.com/ (asked for http://example.com/)');
    expect(screen.getByTestId('web-content-type').textContent).toBe('text/html; charset=UTF-8');
    expect(screen.getByText('Example Domain')).toBeTruthy();
    expect(screen.getByTestId('web-text').textContent).toBe('This domain is for use in examples.');
    expect(screen.queryByTestId('stdout')).toBeNull();
  });

  it("shows Chromium's own calls home as a muted note on a browser step that succeeded, not as red stderr", () => {
    const step = finished('browser', true, 'hosts');
    step.result!.stderrTail =
      'Requests to hosts not approved (the page\'s, or Chromium\'s own calls home) were refused, so nothing was sent to them: accounts.google.com, update.googleapis.com, cdn.example.net (approve a step that names one, or allow it for the run or in Settings)\n';
    step.result!.output = {
      url: 'https://example.com/',
      final_url: 'https://example.com/',
      status: 200,
      title: 'Example Domain',
      text: 'Rendered text',
      refused: ['accounts.google.com', 'update.googleapis.com', 'cdn.example.net'],
    };
    render(<StepPanel step={step} />);
    expect(screen.queryByTestId('stderr')).toBeNull();
    const noise = screen.getByTestId('web-chromium-noise');
    expect(noise.className).toContain('muted');
    expect(noise.textContent).toBe('Chromium’s own background calls (accounts.google.com, update.googleapis.com) were blocked, as always; the page does not need them.');
    expect(noise.textContent).not.toMatch(/allow/);
    expect(screen.getByTestId('web-refused').textContent).toMatch(/^The page’s requests to cdn\.example\.net were refused/);
    expect(screen.getByTestId('web-content-type').textContent).toBe('text/html (rendered)');
  });

  it('keeps a failed fetch red, with its status', () => {
    const step = finished('web_fetch', true, 'hosts');
    Object.assign(step.result!, { ok: false, exitCode: 1, stderrTail: 'https://example.com/x answered 404 Not Found.\n' });
    step.result!.output = { url: 'https://example.com/x', final_url: 'https://example.com/x', status: 404, status_text: 'Not Found', content_type: 'text/html', text: '' };
    render(<StepPanel step={step} />);
    expect(screen.getByTestId('web-status').textContent).toBe('404 Not Found');
    expect(screen.getByTestId('web-status').className).toBe('fail');
    expect(screen.getByTestId('stderr').textContent).toContain('answered 404');
  });
});

describe('an approval request left unanswered', () => {
  const asked = { requestId: 'apr_1', askedAt: '2026-12-05T11:12:56Z', args: { command: 'hostnamectl' }, rule: 'shell_sandboxed', risk: 'medium' };
  const waiting = { node: { id: 's', kind: 'tool', tool: 'shell_exec', args: { command: 'hostnamectl' }, depends_on: [] }, state: 'pending', attempts: 0 } as unknown as StepRecord;

  it('waits for an answer while the run goes on', () => {
    render(<StepPanel step={waiting} approvals={[asked]} />);
    expect(screen.getByTestId('approval-history').textContent).toContain('Not answered yet.');
    expect(screen.getByText('Not run yet.')).toBeTruthy();
  });

  it('says the run ended first once it is over (cancelled, failed), not that it still waits', () => {
    render(<StepPanel step={waiting} approvals={[asked]} runEnded />);
    const text = screen.getByTestId('approval-history').textContent;
    expect(text).toContain('Not answered: the run ended first.');
    expect(text).not.toContain('yet');
    expect(screen.getByText('Not run: the run ended first.')).toBeTruthy();
  });
});
