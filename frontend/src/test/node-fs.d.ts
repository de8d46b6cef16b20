// The Node APIs tests use (ui/contrast.test.ts and ui/tokens.test.ts read the
// sources, which Vitest hands modules over empty for stylesheets); the app
// itself has no Node types.
declare module 'node:fs' {
  export function readFileSync(path: URL, encoding: 'utf8'): string;
  export function readdirSync(path: URL, options: { recursive: true }): string[];
}
