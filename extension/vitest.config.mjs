// Unit tests run in plain Node. The few modules that import `vscode` (src/vscode/) get the small stand-in in
// test/vscodeMock.ts. The webview's tests (test/webview/) ask for jsdom in their first line, for a real DOM.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: {
    alias: { vscode: fileURLToPath(new URL('./test/vscodeMock.ts', import.meta.url)) },
  },
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
    testTimeout: 20_000,
    reporters: ['default'],
  },
});
