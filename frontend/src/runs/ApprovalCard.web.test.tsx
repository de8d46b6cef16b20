// @vitest-environment jsdom
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { fakeApi } from '../test/fakeChannel';
import { approval } from '../test/fixtures';
import { ApprovalCard } from './ApprovalCard';

afterEach(cleanup);

const RULES = [{ id: 'web_private', level: 'high', description: 'names this machine or a private network' }];

function webCard() {
  const { api, channel } = fakeApi({ Answer: () => null });
  const onAnswered = vi.fn();
  const a = approval({
    tool: 'web_fetch',
    rule: 'web_private',
    network: true,
    args: { url: 'http://127.0.0.1:8080/notes' },
    why: 'it reaches 127.0.0.1, a loopback address (this machine or your network), which needs its own approval',
    web: { url: 'http://127.0.0.1:8080/notes', host: '127.0.0.1', method: 'GET', maxBytes: 5 * 1024 * 1024, maxRedirects: 5, timeoutMs: 30000, local: 'loopback' },
  });
  render(<ApprovalCard api={api} approval={a} rules={RULES as never} onAnswered={onAnswered} />);
  return { channel, onAnswered };
}

describe('ApprovalCard for a web step', () => {
  it('shows the URL, host, method and limits', () => {
    webCard();
    const plan = within(screen.getByTestId('approval-web'));
    expect(plan.getByText('http://127.0.0.1:8080/notes')).toBeTruthy();
    expect(plan.getByText('127.0.0.1')).toBeTruthy();
    expect(plan.getByText('a loopback address: this machine or your network')).toBeTruthy();
    expect(plan.getByText('GET')).toBeTruthy();
    expect(plan.getByText('5 MiB of body, 5 redirects, 30 s')).toBeTruthy();
    expect(screen.queryByText('Allow network access for this step')).toBeNull();
  });

  it('approves with the network, and can allow the host for the run', async () => {
    const { channel, onAnswered } = webCard();
    fireEvent.click(screen.getByRole('checkbox', { name: 'Also allow 127.0.0.1 for the rest of this run' }));
    fireEvent.click(screen.getByRole('button', { name: 'Approve' }));
    await waitFor(() => expect(onAnswered).toHaveBeenCalledOnce());
    expect(channel.calls('Answer')[0]![0]).toMatchObject({ approve: true, network: true, allowHost: true });
  });
});

describe('ApprovalCard for a browser step', () => {
  it('says the page is rendered in the sandboxed Chromium', () => {
    const { api } = fakeApi({ Answer: () => null });
    const a = approval({
      tool: 'browser',
      rule: 'web_new_host',
      network: true,
      args: { url: 'https://app.example/dash' },
      web: { url: 'https://app.example/dash', host: 'app.example', method: 'GET', maxBytes: 0, maxRedirects: 0, timeoutMs: 60000, browser: true },
    });
    render(<ApprovalCard api={api} approval={a} rules={RULES as never} onAnswered={vi.fn()} />);
    const plan = within(screen.getByTestId('approval-web'));
    expect(plan.getByText(/rendered in the sandboxed Chromium \(its scripts run; requests to other hosts are refused unless allowed\), 1 min/)).toBeTruthy();
  });
});
