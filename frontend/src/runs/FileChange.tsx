import { useMemo } from 'react';
import type { CurrentFile } from '../bridge';
import { formatBytes } from '../lib/format';
import { lineDiff } from '../lib/lineDiff';
import './runs.css';

/** fileWriteArgs reads a file_write's arguments; undefined when they are not one. */
export function fileWriteArgs(args: unknown): { path: string; content: string; append: boolean } | undefined {
  if (args === null || typeof args !== 'object') return undefined;
  const a = args as Record<string, unknown>;
  if (typeof a.path !== 'string' || typeof a.content !== 'string') return undefined;
  return { path: a.path, content: a.content, append: a.append === true };
}

/**
 * FileChange shows exactly what a file_write does: the content it writes,
 * and, when the file exists and ducklm could read it, the change as a line
 * diff (an append shows the lines added at the end).
 */
export function FileChange({ args, current }: { args: { path: string; content: string; append: boolean }; current?: CurrentFile | undefined }) {
  const after = args.append && current?.exists && current.content !== undefined ? current.content + args.content : args.content;
  const diff = useMemo(
    () => (current?.exists && !current.binary && !current.truncated && current.content !== undefined ? lineDiff(current.content, after) : undefined),
    [current, after],
  );
  let what: string;
  if (!current) what = args.append ? 'Appends to' : 'Writes';
  else if (current.error) what = `${args.append ? 'Appends to' : 'Writes'} (the file could not be read: ${current.error})`;
  else if (!current.exists) what = 'Creates';
  else what = `${args.append ? 'Appends to' : 'Replaces'} (now ${formatBytes(current.bytes)})`;
  const changed = diff?.filter((l) => l.kind !== 'same').length ?? 0;
  return (
    <div className="file-change" data-testid="file-change">
      {/* The path stands outside the label: the label's small capitals would upper-case it (NOTE.TXT). */}
      <span className="file-change-head" data-testid="file-change-head">
        <span className="field-label">{what}</span> <span className="mono">{args.path}</span>
      </span>
      {diff ? (
        <>
          <span className="muted small">
            {changed === 0 ? 'The file already holds exactly this.' : linesChanged(diff.filter((l) => l.kind === 'removed').length, diff.filter((l) => l.kind === 'added').length)}
          </span>
          <pre className="code-block line-diff" aria-label={`Changes to ${args.path}`} data-testid="file-diff">
            {diff.map((l, i) => (
              <span key={i} className={`diff-${l.kind}`}>
                {l.kind === 'added' ? '+ ' : l.kind === 'removed' ? '- ' : '  '}
                {l.text}
                {'\n'}
              </span>
            ))}
          </pre>
        </>
      ) : (
        <>
          {current?.exists && (current.binary || current.truncated) && (
            <span className="muted small">The file is {current.binary ? 'not text' : 'too large to compare here'}; the content it gets:</span>
          )}
          <pre className="code-block" aria-label={`Content for ${args.path}`} data-testid="file-content">
            {args.content === '' ? '(empty)' : args.content}
          </pre>
        </>
      )}
    </div>
  );
}

/** linesChanged counts a diff's lines: "1 line removed, 3 added". */
export function linesChanged(removed: number, added: number): string {
  return `${removed} ${removed === 1 ? 'line' : 'lines'} removed, ${added} added`;
}
