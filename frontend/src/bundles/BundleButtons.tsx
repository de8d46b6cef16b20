import { useState } from 'react';
import { createPortal } from 'react-dom';
import type { DucklmApi, ImportResult } from '../bridge';
import type { RootKind } from './bundle';
import { ExportDialog } from './ExportDialog';
import { ImportDialog } from './ImportDialog';

interface ExportButtonProps {
  api: DucklmApi;
  root: string;
  kind: RootKind;
  name: string;
  forked: boolean;
  /** Why the export is not possible now (the button is then disabled and says so). */
  unavailable?: string;
  className?: string;
}

// The dialogs are drawn under <body>, not beside their button: a button sits
// in a header's flex row, and a dialog there (the row's child, fixed or not)
// moved the button 211 px aside behind the open dialog.

/** ExportButton opens the export dialog for a run or a world. */
export function ExportButton({ api, root, kind, name, forked, unavailable, className = 'button small' }: ExportButtonProps) {
  const [open, setOpen] = useState(false);
  return (
    <>
      <button type="button" className={className} onClick={() => setOpen(true)} disabled={unavailable !== undefined} title={unavailable ?? `Write this ${kind} to a signed .ducklm file`}>
        Export…
      </button>
      {open && createPortal(<ExportDialog api={api} root={root} kind={kind} name={name} forked={forked} onClose={() => setOpen(false)} />, document.body)}
    </>
  );
}

/** ImportButton opens the import dialog. */
export function ImportButton({ api, onImported, className = 'button small bundle-import' }: { api: DucklmApi; onImported?: (r: ImportResult) => void; className?: string }) {
  const [open, setOpen] = useState(false);
  return (
    <>
      <button type="button" className={className} onClick={() => setOpen(true)} title="Bring in worlds and runs from a .ducklm file">
        Import bundle…
      </button>
      {open && createPortal(<ImportDialog api={api} onClose={() => setOpen(false)} onImported={onImported} />, document.body)}
    </>
  );
}
