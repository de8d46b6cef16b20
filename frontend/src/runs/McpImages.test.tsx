// @vitest-environment jsdom
import { cleanup, render, screen, waitFor } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { StepRecord } from '../bridge';
import { mcpImagesOf } from './McpImages';
import { StepPanel } from './StepPanel';

afterEach(cleanup);

const PNG = 'data:image/png;base64,iVBORw0KGgo=';
const BLOB = { digest: 'sha256:ab', size: 10, mediaType: 'image/png' };

function mcpStep(output: unknown): StepRecord {
  return {
    node: { id: 'img', kind: 'tool', tool: 'mcp__everything__get-tiny-image', args: {}, depends_on: [] },
    state: 'done',
    attempts: 1,
    approved: true,
    network: false,
    result: { step: 'img', attempt: 1, ok: true, exitCode: 0, timedOut: false, truncated: false, durationMs: 40, stdoutTail: 'A tiny image:\n', sandboxed: true, output },
  } as StepRecord;
}

describe('an MCP step in the run view', () => {
  it('shows the images its server answered with, each loaded by its place among them', async () => {
    const load = vi.fn((_step: string, i: number) => Promise.resolve(`${PNG}#${i}`));
    const output = {
      server: 'everything',
      tool: 'get-tiny-image',
      content: [
        { type: 'text', text: 'A tiny image:' },
        { type: 'image', mimeType: 'image/png', blob: BLOB },
        { type: 'audio', mimeType: 'audio/wav', blob: BLOB },
        { type: 'image', mimeType: 'image/png', blob: BLOB },
      ],
    };
    render(<StepPanel step={mcpStep(output)} image={load} />);
    expect(screen.getByText('Images from the server (2)')).toBeTruthy();
    const imgs = await waitFor(() => {
      const found = screen.getAllByTestId('mcp-image');
      expect(found).toHaveLength(2);
      return found;
    });
    expect(imgs.map((i) => i.getAttribute('src'))).toEqual([`${PNG}#0`, `${PNG}#1`]);
    expect(load.mock.calls).toEqual([
      ['img', 0],
      ['img', 1],
    ]);
    expect(screen.getByTestId('stdout').textContent).toContain('A tiny image:');
  });

  it('says why an image cannot be read', async () => {
    const output = { content: [{ type: 'image', mimeType: 'image/png', blob: BLOB }] };
    render(<StepPanel step={mcpStep(output)} image={() => Promise.reject(new Error('the blob is missing'))} />);
    await waitFor(() => expect(screen.getByText(/the blob is missing/)).toBeTruthy());
  });

  it('counts only images kept as blobs of an MCP step', () => {
    expect(mcpImagesOf('browser', { content: [{ type: 'image', mimeType: 'image/png', blob: BLOB }] })).toEqual([]);
    expect(mcpImagesOf('mcp__a__b', { content: [{ type: 'image', mimeType: 'image/png' }] })).toEqual([]);
    expect(mcpImagesOf('mcp__a__b', { content: [{ type: 'image', mimeType: 'text/html', blob: BLOB }] })).toEqual([]);
    expect(mcpImagesOf('mcp__a__b', null)).toEqual([]);
  });
});
