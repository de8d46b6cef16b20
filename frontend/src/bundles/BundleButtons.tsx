import { useState } from 'react';
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

/** ExportButton opens the export dialog for a run or a world. */
export function ExportButton({ api, root, kind, name, forked, unavailable, className = 'button small' }: ExportButtonProps) {
  const [open, setOpen] = useState(false);
  return (
    <>
      <button type="button" className={className} onClick={() => setOpen(true)} disabled={unavailable !== undefined} title={unavailable ?? `Write this ${kind} to a signed .ducklm file`}>
        Export…
      </button>
      {open && <ExportDialog api={api} root={root} kind={kind} name={name} forked={forked} onClose={() => setOpen(false)} />}
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
      {open && <ImportDialog api={api} onClose={() => setOpen(false)} onImported={onImported} />}
    </>
  );
}
