// Copying text: WebKitGTK inside the Wails window does not always grant the
// browser clipboard API, so the Wails runtime does it there.
import { ClipboardSetText } from '../../wailsjs/runtime/runtime';
import { BridgeError, call } from './errors';

/** copyText puts text on the system clipboard, or rejects with a BridgeError. */
export async function copyText(text: string, win: unknown = globalThis): Promise<void> {
  const w = win as { runtime?: unknown; navigator?: Navigator };
  if (typeof w.runtime === 'object' && w.runtime !== null) {
    const ok = await call(() => ClipboardSetText(text));
    if (!ok) throw new BridgeError('The clipboard refused the text');
    return;
  }
  const clip = w.navigator?.clipboard;
  if (!clip) throw new BridgeError('This page has no clipboard access');
  await call(() => clip.writeText(text));
}
