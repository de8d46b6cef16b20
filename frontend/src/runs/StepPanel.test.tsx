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

  it('says whether bubblewrap held a sandboxed command', () => {
    render(<StepPanel step={finished('shell_exec', true, 'sandbox')} />);
    expect(screen.getByTestId('step-confinement').textContent).toBe('bubblewrap');
    cleanup();
    render(<StepPanel step={finished('shell_exec', false, 'sandbox')} />);
    expect(screen.getByTestId('step-confinement').textContent).toBe('none: it ran on this machine as you');
  });
});
