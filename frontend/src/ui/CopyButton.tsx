import { useEffect, useState } from 'react';
import { CheckMarkIcon, CopyIcon } from './icons';

interface CopyButtonProps {
  text: string;
  /** What is copied, for screen readers ("data directory"). */
  what: string;
  copy: (text: string) => Promise<void>;
}

type CopyState = { kind: 'idle' } | { kind: 'copied' } | { kind: 'failed'; reason: string };

/** CopyButton copies text and says for a moment whether it worked. */
export function CopyButton({ text, what, copy }: CopyButtonProps) {
  const [state, setState] = useState<CopyState>({ kind: 'idle' });

  useEffect(() => {
    if (state.kind === 'idle') return;
    const id = setTimeout(() => setState({ kind: 'idle' }), 1600);
    return () => clearTimeout(id);
  }, [state]);

  const onClick = () => {
    copy(text).then(
      () => setState({ kind: 'copied' }),
      (e: unknown) => setState({ kind: 'failed', reason: e instanceof Error ? e.message : String(e) }),
    );
  };

  const title =
    state.kind === 'copied' ? 'Copied' : state.kind === 'failed' ? `Could not copy: ${state.reason}` : `Copy ${what}`;
  return (
    <button type="button" className={`icon-button copy-${state.kind}`} onClick={onClick} title={title} aria-label={title}>
      {state.kind === 'copied' ? <CheckMarkIcon /> : <CopyIcon />}
    </button>
  );
}
