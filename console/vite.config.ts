import path from 'node:path';
import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

const here = path.dirname(fileURLToPath(import.meta.url));

// The console is served by the Brier process at /console from dist/console (see src/http/static.ts).
export default defineConfig({
  root: here,
  base: '/console/',
  plugins: [react()],
  build: {
    outDir: path.resolve(here, '../dist/console'),
    emptyOutDir: true,
    assetsDir: 'assets',
    sourcemap: false,
    // No inline scripts or styles: the console is served with a strict Content-Security-Policy.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
  },
});
