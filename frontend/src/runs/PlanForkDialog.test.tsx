// @vitest-environment jsdom
import { act, cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { fakeApi } from '../test/fakeChannel';
import { PlanForkDialog } from './PlanForkDialog';

afterEach(cleanup);

const GOOD = JSON.stringify({ nodes: [{ id: 'a' }, { id: 'b' }] }, null, 2);
const BAD = '{"nodes": [';

/** validatePlan answers as the backend's ValidatePlan does: a sentence per problem. */
function validatePlan(text: string) {
  try {
    const v = JSON.parse(text) as { nodes: unknown[] };
    return { valid: true, problems: [], steps: v.nodes.length };
  } catch {
    return { valid: false, problems: ['the plan is not valid JSON: unexpected EOF'], steps: 0 };
  }
}

function dialog(fork: (input: { delta: string }) => unknown) {
  const { api, channel } = fakeApi({ ValidatePlan: validatePlan, Fork: fork });
  const onForked = vi.fn();
  render(<PlanForkDialog api={api} parentRunId="run_1" checkpointId="cp_1" plan={GOOD} name="x (edited plan)" onClose={() => {}} onForked={onForked} />);
  const box = screen.getByRole('dialog', { name: 'Fork this run with an edited plan' });
  return { channel, onForked, box, plan: within(box).getByRole('textbox', { name: 'Plan (JSON)' }) };
}

describe('PlanForkDialog', () => {
  it('says the edited plan is not valid when Fork is pressed before the check, and clears it once the plan is fixed', async () => {
    // The backend's own answer to a fork whose delta is not JSON.
    const { channel, box, plan } = dialog((input) => {
      if (!validatePlan(input.delta).valid) throw new Error('the delta is not valid JSON');
      return { fork: { id: 'frk_1' }, world: { id: 'wld_1', name: 'x' }, run: { id: 'run_2' } };
    });
    await within(box).findByText('The current plan, unchanged. 2 steps, valid.');

    // Typed and pressed at once: the check has not run on the broken text yet.
    fireEvent.change(plan, { target: { value: BAD } });
    fireEvent.click(within(box).getByRole('button', { name: 'Fork with this plan' }));
    await waitFor(() => expect(within(box).getByRole('alert').textContent).toBe('the plan is not valid JSON: unexpected EOF'));
    expect(within(box).queryByText(/delta/)).toBeNull();
    expect(channel.calls('Fork')).toHaveLength(0);
    expect(plan.getAttribute('aria-invalid')).toBe('true');

    fireEvent.change(plan, { target: { value: GOOD.replace('"b"', '"c"') } });
    await within(box).findByText('2 steps, valid.');
    expect(within(box).queryByRole('alert')).toBeNull();
    expect(plan.getAttribute('aria-invalid')).toBeNull();
  });

  it('clears a failed fork’s error when the plan is edited', async () => {
    const { box, plan } = dialog(() => {
      throw new Error('the checkpoint cp_1 is gone');
    });
    await within(box).findByText('The current plan, unchanged. 2 steps, valid.');
    fireEvent.click(within(box).getByRole('button', { name: 'Fork with this plan' }));
    expect((await within(box).findByRole('alert')).textContent).toBe('the checkpoint cp_1 is gone');
    fireEvent.change(plan, { target: { value: GOOD.replace('"b"', '"c"') } });
    expect(within(box).queryByRole('alert')).toBeNull();
    await within(box).findByText('2 steps, valid.');
    await act(async () => {});
  });
});
