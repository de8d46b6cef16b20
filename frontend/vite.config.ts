import react from '@vitejs/plugin-react';
import { defineConfig } from 'vitest/config';

// Wails serves the built files from an embedded folder, so every asset URL
// must be relative (base './'), and Go embeds `dist`, which must always hold
// at least public/.gitkeep.
export default defineConfig({
  base: './',
  plugins: [react()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
  },
  test: {
    // Pure modules test in node; DOM tests opt in with a
    // `@vitest-environment jsdom` docblock.
    environment: 'node',
    include: ['src/**/*.test.{ts,tsx}'],
    restoreMocks: true,
    setupFiles: ['src/test/setup.ts'],
    // Component tests render CodeMirror and dagre; a loaded machine needs room.
    testTimeout: 60_000,
  },
});
