import type { ReactNode } from 'react';
import { branchesLine } from './useWorldList';
import './worlds.css';

/**
 * BranchesNote says how many deliberation branches a world list left out
 * and lists them on request, or, while they are listed, leaves them out
 * again. It shows nothing when there are none to speak of.
 */
export function BranchesNote({
  shown,
  left,
  text,
  testId,
  after,
  onToggle,
}: {
  shown: boolean;
  /** The branches the list left out (0 while they are shown). */
  left: number;
  /** The list's search, if any. */
  text: string;
  testId: string;
  /** What follows the count (a pointer to where branches are drawn). */
  after?: ReactNode;
  onToggle: () => void;
}) {
  if (!shown && left === 0) return null;
  return (
    <p className="muted small pad branches-note" data-testid={testId}>
      {shown ? (
        'Deliberation branches are listed, marked with their round. '
      ) : (
        <>
          {branchesLine(left, text)} {after}
          {after ? ' ' : ''}
        </>
      )}
      <button type="button" className="link-button" onClick={onToggle}>
        {shown ? 'Leave them out' : 'List them too'}
      </button>
    </p>
  );
}
