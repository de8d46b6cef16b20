// Payloads are arbitrary JSON and can be large (tool output); the table shows
// one compact line and the hover shows a bounded, indented form.

/** PREVIEW_CHARS is the default length of the one-line preview. */
export const PREVIEW_CHARS = 160;
const DETAIL_CHARS = 2000;

function stringify(value: unknown, indent?: number): string {
  if (value === undefined) return '';
  try {
    return JSON.stringify(value, null, indent) ?? '';
  } catch {
    return String(value);
  }
}

/** truncate cuts s to at most max characters, ending with "…" when cut. */
export function truncate(s: string, max: number): string {
  if (max <= 0) return '';
  if (s.length <= max) return s;
  return `${s.slice(0, max - 1)}…`;
}

/** previewPayload renders a payload as compact one-line JSON of at most max characters. */
export function previewPayload(value: unknown, max = PREVIEW_CHARS): string {
  return truncate(stringify(value), max);
}

/** detailPayload renders a payload as indented JSON of at most max characters (for a tooltip). */
export function detailPayload(value: unknown, max = DETAIL_CHARS): string {
  return truncate(stringify(value, 2), max);
}
