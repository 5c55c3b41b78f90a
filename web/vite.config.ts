// The dashboard's build: Preact through Vite's own JSX transform (no Babel), hashed assets under
// /assets/ that the API serves with a year's cache, and a size report after every build.
import { defineConfig } from 'vite';

export default defineConfig({
  root: import.meta.dirname,
  base: '/',
  publicDir: 'public',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  resolve: { alias: { react: 'preact/compat', 'react-dom': 'preact/compat' } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    assetsDir: 'assets',
    reportCompressedSize: true,
    // The API reads every file of dist/ into memory at start: keep it to the app itself.
    sourcemap: false,
  },
  server: { proxy: { '^/(?!ui|assets|@|src|node_modules).*': 'http://127.0.0.1:8080' } },
});
