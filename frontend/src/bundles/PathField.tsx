import { useId } from 'react';

interface PathFieldProps {
  label: string;
  value: string;
  onChange: (path: string) => void;
  /** Whether this window has native file dialogs (undefined while asking). */
  native: boolean | undefined;
  onBrowse: () => void;
  placeholder: string;
  /** What the server does with the path, said in the browser. */
  browserNote: string;
  disabled?: boolean;
}

/**
 * PathField is a bundle file's path: typed, or chosen with the native dialog
 * in the desktop window. A browser has no dialog that can name a file on the
 * machine ducklm runs on, so there the field says what the path means.
 */
export function PathField({ label, value, onChange, native, onBrowse, placeholder, browserNote, disabled }: PathFieldProps) {
  const noteId = useId();
  return (
    <div className="field">
      <label className="field-label" htmlFor={`${noteId}-input`}>
        {label}
      </label>
      <div className="row">
        <input
          id={`${noteId}-input`}
          className="input mono grow"
          value={value}
          onChange={(e) => onChange(e.target.value)}
          placeholder={placeholder}
          spellCheck={false}
          disabled={disabled}
          aria-describedby={native === false ? noteId : undefined}
        />
        {native && (
          <button type="button" className="button" onClick={onBrowse} disabled={disabled}>
            Browse…
          </button>
        )}
      </div>
      {native === false && (
        <p id={noteId} className="bundle-browser-note small">
          This page runs in a browser, which has no file dialog for this machine. {browserNote} Type a full path
          (starting with / or ~/).
        </p>
      )}
    </div>
  );
}
