// An explicit plan typed into the editor is checked twice as it changes:
// here for JSON syntax (instantly, with the line and column), then by the
// backend's validator (tools, dependencies, cycles) once it parses.

export type PlanSyntax =
  | { ok: true; value: unknown }
  | { ok: false; message: string; line?: number; column?: number };

/** An example plan for the editor: one read-only shell step. */
export const EXAMPLE_PLAN = `{
  "nodes": [
    {
      "id": "step-1",
      "kind": "tool",
      "tool": "shell_exec",
      "args": { "command": "hostnamectl" },
      "depends_on": []
    }
  ]
}`;

/** lineColumn converts a character offset into a 1-based line and column. */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, Math.max(0, offset));
  const lines = before.split('\n');
  return { line: lines.length, column: (lines[lines.length - 1]?.length ?? 0) + 1 };
}

/** checkPlanSyntax parses plan text and says where JSON syntax breaks. */
export function checkPlanSyntax(text: string): PlanSyntax {
  if (text.trim() === '') return { ok: false, message: 'The plan is empty; write {"nodes": [...]} or switch to a free-text task.' };
  try {
    const value: unknown = JSON.parse(text);
    if (value === null || typeof value !== 'object' || Array.isArray(value) || !Array.isArray((value as { nodes?: unknown }).nodes)) {
      return { ok: false, message: 'A plan is an object with a "nodes" list: {"nodes": [{"id": "step-1", …}]}.' };
    }
    return { ok: true, value };
  } catch (e) {
    const raw = e instanceof Error ? e.message : String(e);
    const at = /at position (\d+)/.exec(raw);
    const lc = /line (\d+) column (\d+)/.exec(raw);
    const reason = raw.replace(/\s*\(line \d+ column \d+\)/, '').replace(/ in JSON at position \d+/, '').replace(/^JSON\.parse: /, '');
    if (lc) return { ok: false, message: `JSON syntax: ${reason} (line ${lc[1]}, column ${lc[2]})`, line: Number(lc[1]), column: Number(lc[2]) };
    if (at) {
      const { line, column } = lineColumn(text, Number(at[1]));
      return { ok: false, message: `JSON syntax: ${reason} (line ${line}, column ${column})`, line, column };
    }
    return { ok: false, message: `JSON syntax: ${reason}` };
  }
}
