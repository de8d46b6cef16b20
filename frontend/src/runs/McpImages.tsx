import { useCallback } from 'react';
import { useLoad } from '../ui/useLoad';
import './runs.css';

/** McpContent is one item of an MCP step's answer, as its Output keeps it (Go: mcpclient's content). */
interface McpContent {
  type: string;
  mimeType?: string;
  blob?: unknown;
}

/** mcpImagesOf counts the images an MCP step's server answered with (kept as blobs). */
export function mcpImagesOf(tool: string | undefined, output: unknown): { mimeType: string }[] {
  if (!tool?.startsWith('mcp__') || typeof output !== 'object' || output === null) return [];
  const content = (output as { content?: unknown }).content;
  if (!Array.isArray(content)) return [];
  return (content as McpContent[])
    .filter((c) => c && c.type === 'image' && typeof c.blob === 'object' && c.blob !== null && (c.mimeType ?? '').startsWith('image/'))
    .map((c) => ({ mimeType: c.mimeType ?? '' }));
}

/** McpImages shows the images an MCP step's server answered with. */
export function McpImages({ count, load }: { count: number; load: (index: number) => Promise<string> }) {
  return (
    <div>
      <span className="field-label">{count === 1 ? 'Image from the server' : `Images from the server (${count})`}</span>
      {Array.from({ length: count }, (_, i) => (
        <McpImage key={i} index={i} load={load} />
      ))}
    </div>
  );
}

function McpImage({ index, load }: { index: number; load: (index: number) => Promise<string> }) {
  const get = useCallback(() => load(index), [load, index]);
  const [img] = useLoad(get, [get]);
  return (
    <>
      {img.status === 'loading' && <p className="muted small">Loading image {index + 1}…</p>}
      {img.status === 'error' && <p className="inline-error small">{img.message}</p>}
      {img.value && <img className="page-shot" src={img.value} alt={`Image ${index + 1} the server answered with`} data-testid="mcp-image" />}
    </>
  );
}
