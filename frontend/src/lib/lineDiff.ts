// A line diff for the approval card: what a file_write changes in a file
// that exists. Longest common subsequence over lines; past LIMIT lines on
// either side it gives up rather than freeze the window.

/** DiffLine is one line of a diff: kept, removed (only in the old text) or added. */
export interface DiffLine {
  kind: 'same' | 'removed' | 'added';
  text: string;
}

/** LIMIT is the most lines a side may have for a line diff (the LCS table is LIMIT²). */
export const LIMIT = 2000;

/** lineDiff diffs two texts by lines, or returns undefined when either is too long to diff here. */
export function lineDiff(before: string, after: string): DiffLine[] | undefined {
  const a = before.split('\n');
  const b = after.split('\n');
  if (a.length > LIMIT || b.length > LIMIT) return undefined;
  const n = a.length;
  const m = b.length;
  // lcs[i][j]: the LCS length of a[i:] and b[j:], in one flat array.
  const lcs = new Uint32Array((n + 1) * (m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i * (m + 1) + j] = a[i] === b[j] ? lcs[(i + 1) * (m + 1) + j + 1]! + 1 : Math.max(lcs[(i + 1) * (m + 1) + j]!, lcs[i * (m + 1) + j + 1]!);
    }
  }
  const out: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) {
      out.push({ kind: 'same', text: a[i]! });
      i++;
      j++;
    } else if (lcs[(i + 1) * (m + 1) + j]! >= lcs[i * (m + 1) + j + 1]!) {
      out.push({ kind: 'removed', text: a[i++]! });
    } else {
      out.push({ kind: 'added', text: b[j++]! });
    }
  }
  while (i < n) out.push({ kind: 'removed', text: a[i++]! });
  while (j < m) out.push({ kind: 'added', text: b[j++]! });
  return out;
}
