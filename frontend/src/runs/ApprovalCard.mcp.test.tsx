// @vitest-environment jsdom
import { cleanup, render, screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { fakeApi } from '../test/fakeChannel';
import { approval } from '../test/fixtures';
import { ApprovalCard } from './ApprovalCard';

afterEach(cleanup);

const RULES = [{ id: 'mcp_call', level: 'medium', description: 'A call to a tool of an MCP server you added.' }];

describe('ApprovalCard for an MCP tool', () => {
  it('shows the server, the tool, the exact arguments and the server’s readOnlyHint, marked as not trusted', () => {
    const { api } = fakeApi({ Answer: () => null });
    const a = approval({
      tool: 'mcp__files__read_text_file',
      rule: 'mcp_call',
      args: { path: '/data/notes.txt', head: 10 },
      why: 'it calls tool read_text_file of MCP server files',
      mcp: { server: 'files', tool: 'read_text_file', readOnlyHint: true },
    });
    render(<ApprovalCard api={api} approval={a} rules={RULES as never} onAnswered={() => {}} />);
    const card = within(screen.getByTestId('approval-mcp'));
    expect(card.getByText('files')).toBeTruthy();
    expect(card.getByText('read_text_file')).toBeTruthy();
    expect(card.getByText('it only reads (readOnlyHint)')).toBeTruthy();
    expect(card.getByText('What a server says of its tool is shown, never trusted on its own.')).toBeTruthy();
    expect(screen.getByText(/"path": "\/data\/notes.txt"/)).toBeTruthy();
  });

  it('says the server claims nothing when it gives no hint', () => {
    const { api } = fakeApi({ Answer: () => null });
    const a = approval({ tool: 'mcp__files__write_file', rule: 'mcp_call', args: { path: '/x' }, mcp: { server: 'files', tool: 'write_file' } });
    render(<ApprovalCard api={api} approval={a} rules={RULES as never} onAnswered={() => {}} />);
    expect(within(screen.getByTestId('approval-mcp')).getByText('nothing about what it changes')).toBeTruthy();
  });
});
