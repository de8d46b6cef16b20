// @vitest-environment jsdom
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { McpServer, McpServerInput } from '../bridge';
import { fakeApi } from '../test/fakeChannel';
import { ToolsSection } from './ToolsSection';

afterEach(cleanup);

const FILES: McpServer = {
  name: 'files',
  command: '/opt/node_modules/.bin/mcp-server-filesystem',
  args: ['/'],
  state: 'ready',
  tools: [
    { name: 'read_text_file', catalog: 'mcp__files__read_text_file', description: 'Reads a file.', readOnlyHint: true },
    { name: 'write_file', catalog: 'mcp__files__write_file' },
  ],
  refused: ["MCP server files's tool odd was left out: its input schema cannot be used, because it is not a JSON object"],
};

/** A backend that keeps its servers as mcpclient does. */
function backend(start: McpServer[]) {
  let servers = start.map((s) => ({ ...s }));
  return fakeApi({
    MCPServers: () => servers,
    AddMCPServer: (i: McpServerInput) => {
      if (!/^[a-z0-9][a-z0-9_-]*$/.test(i.name)) throw new Error(`an MCP server's name is 1 to 32 lower-case letters, digits, - or _, not "${i.name}"`);
      const s: McpServer = { name: i.name, command: i.command, args: i.args, url: i.url, state: 'failed', error: 'MCP server chatty did not start: it did not speak MCP on its standard output', tools: [] };
      servers = [...servers, s];
      return s;
    },
    TestMCPServer: (name: string) => servers.find((s) => s.name === name),
    RemoveMCPServer: (name: string) => {
      servers = servers.filter((s) => s.name !== name);
      return null;
    },
    MarkMCPToolSafe: (server: string, tool: string, safe: boolean) => {
      servers = servers.map((s) => (s.name !== server ? s : { ...s, tools: s.tools.map((t) => (t.name === tool ? { ...t, safe } : t)) }));
      return servers.find((s) => s.name === server);
    },
  });
}

describe('ToolsSection', () => {
  it('lists each server with its state, what it can reach, its tools and those left out', async () => {
    const { api } = backend([FILES, { name: 'web', url: 'https://mcp.example.com/mcp', state: 'failed', error: 'MCP server web did not answer', tools: [] }]);
    render(<ToolsSection api={api} />);
    const files = await screen.findByRole('listitem', { name: 'files' });
    expect(within(files).getByText('ready')).toBeTruthy();
    expect(within(files).getByText('/opt/node_modules/.bin/mcp-server-filesystem /')).toBeTruthy();
    expect(within(files).getByText('Runs in the sandbox, writes only a folder of its own, no network.')).toBeTruthy();
    expect(within(files).getByText('mcp__files__read_text_file')).toBeTruthy();
    expect(within(files).getByText(/the server says it only reads/)).toBeTruthy();
    expect(within(files).getByText(/tool odd was left out/)).toBeTruthy();
    const web = screen.getByRole('listitem', { name: 'web' });
    expect(within(web).getByText("Reached by URL, through web_fetch's host checks.")).toBeTruthy();
    expect(within(web).getByText('MCP server web did not answer.')).toBeTruthy();
  });

  it('marks a tool safe, tests a server and removes it after asking', async () => {
    const { api, channel } = backend([FILES]);
    render(<ToolsSection api={api} />);
    fireEvent.click(await screen.findByLabelText('write_file is safe'));
    expect((screen.getByLabelText('write_file is safe') as HTMLInputElement).checked, 'the switch moves at once').toBe(true);
    expect(await screen.findByText('write_file runs without asking in the risky mode.')).toBeTruthy();
    expect(channel.calls('MarkMCPToolSafe')).toEqual([['files', 'write_file', true]]);
    await waitFor(() => expect((screen.getByLabelText('write_file is safe') as HTMLInputElement).checked).toBe(true));

    fireEvent.click(screen.getByRole('button', { name: 'Test' }));
    expect(await screen.findByText('files started and listed 2 tools.')).toBeTruthy();

    fireEvent.click(screen.getByRole('button', { name: 'Remove…' }));
    const confirm = screen.getByRole('group', { name: 'Confirm removing files' });
    fireEvent.click(within(confirm).getByRole('button', { name: 'Remove' }));
    expect(await screen.findByText('Removed files.')).toBeTruthy();
    expect(await screen.findByTestId('mcp-empty')).toBeTruthy();
    expect(channel.calls('RemoveMCPServer')).toEqual([['files']]);
  });

  it('adds a command server with one argument a line, and says why a bad one is refused', async () => {
    const { api, channel } = backend([]);
    render(<ToolsSection api={api} />);
    await screen.findByTestId('mcp-empty');
    const form = screen.getByRole('form', { name: 'Add an MCP server' });
    fireEvent.change(within(form).getByLabelText('Name'), { target: { value: 'Bad Name' } });
    fireEvent.change(within(form).getByLabelText('Command'), { target: { value: '/bin/server' } });
    fireEvent.click(within(form).getByRole('button', { name: 'Add server' }));
    expect((await within(form).findByRole('alert')).textContent).toBe('an MCP server\'s name is 1 to 32 lower-case letters, digits, - or _, not "Bad Name".');

    fireEvent.change(within(form).getByLabelText('Name'), { target: { value: 'chatty' } });
    fireEvent.change(within(form).getByLabelText(/^Arguments/), { target: { value: 'garbage\n\n--flag' } });
    fireEvent.click(within(form).getByRole('checkbox', { name: /write the run's workspace/ }));
    fireEvent.click(within(form).getByRole('button', { name: 'Add server' }));
    expect(await screen.findByText('Added chatty, but it did not start: fix what it says and press Test, or remove it.')).toBeTruthy();
    expect(await screen.findByText('MCP server chatty did not start: it did not speak MCP on its standard output.')).toBeTruthy();
    expect(channel.calls('AddMCPServer')[1]).toEqual([
      { name: 'chatty', command: '/bin/server', args: ['garbage', '--flag'], url: '', network: false, workspace: true, private: false },
    ]);
    expect(await screen.findByRole('listitem', { name: 'chatty' })).toBeTruthy();
  });

  it('adds a URL server without a command or arguments', async () => {
    const { api, channel } = backend([]);
    render(<ToolsSection api={api} />);
    await screen.findByTestId('mcp-empty');
    const form = screen.getByRole('form', { name: 'Add an MCP server' });
    fireEvent.click(within(form).getByRole('radio', { name: 'A URL' }));
    fireEvent.change(within(form).getByLabelText('Name'), { target: { value: 'web' } });
    fireEvent.change(within(form).getByLabelText('URL'), { target: { value: 'http://localhost:3000/mcp' } });
    fireEvent.click(within(form).getByRole('checkbox', { name: /private or loopback/ }));
    fireEvent.click(within(form).getByRole('button', { name: 'Add server' }));
    await screen.findByRole('listitem', { name: 'web' });
    expect(channel.calls('AddMCPServer')[0]).toEqual([
      { name: 'web', command: '', args: [], url: 'http://localhost:3000/mcp', network: false, workspace: false, private: true },
    ]);
  });
});

describe('ToolsSection inside the settings form', () => {
  it('adds a server without submitting the settings form around it', async () => {
    const { api, channel } = backend([]);
    const submitted = vi.fn((e: { preventDefault: () => void }) => e.preventDefault());
    render(
      <form onSubmit={submitted}>
        <ToolsSection api={api} />
      </form>,
    );
    await screen.findByTestId('mcp-empty');
    const form = screen.getByRole('form', { name: 'Add an MCP server' });
    fireEvent.change(within(form).getByLabelText('Name'), { target: { value: 'chatty' } });
    fireEvent.change(within(form).getByLabelText('Command'), { target: { value: '/bin/server' } });
    fireEvent.click(within(form).getByRole('button', { name: 'Add server' }));
    expect(await screen.findByRole('listitem', { name: 'chatty' })).toBeTruthy();
    expect(channel.calls('AddMCPServer')).toHaveLength(1);
    expect(submitted).not.toHaveBeenCalled();
  });
});

describe('ToolsSection safe switch', () => {
  it('goes back when the backend refuses, and says why', async () => {
    const { api, channel } = backend([FILES]);
    channel.handle('MarkMCPToolSafe', () => {
      throw new Error('MCP server files did not list its tools, so "write_file" cannot be checked and marked safe');
    });
    render(<ToolsSection api={api} />);
    fireEvent.click(await screen.findByLabelText('write_file is safe'));
    expect(await screen.findByText(/cannot be checked and marked safe\./)).toBeTruthy();
    expect((screen.getByLabelText('write_file is safe') as HTMLInputElement).checked).toBe(false);
  });

  it('comes into view once its servers are listed when asked for by its address (ducklm open tools), once', async () => {
    const scrolled = vi.fn();
    const was = Element.prototype.scrollIntoView;
    Element.prototype.scrollIntoView = scrolled;
    try {
      const { api } = backend([FILES]);
      const { rerender } = render(<ToolsSection api={api} inView />);
      await screen.findByLabelText('write_file is safe');
      expect(scrolled).toHaveBeenCalledTimes(1);
      expect(scrolled.mock.contexts[0]).toBe(screen.getByRole('region', { name: 'Tools' }));
      rerender(<ToolsSection api={api} inView />);
      expect(scrolled, 'not again on a later render').toHaveBeenCalledTimes(1);
      cleanup();
      render(<ToolsSection api={api} />);
      await screen.findByLabelText('write_file is safe');
      expect(scrolled, 'not without being asked for').toHaveBeenCalledTimes(1);
    } finally {
      Element.prototype.scrollIntoView = was;
    }
  });
});
