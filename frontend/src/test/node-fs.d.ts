// The one Node API a test uses (ui/contrast.test.ts reads the stylesheet,
// which Vitest hands modules over empty); the app itself has no Node types.
declare module 'node:fs' {
  export function readFileSync(path: URL, encoding: 'utf8'): string;
}
