// Vite build of the console (docs/console.md). `base` is the path every server mounts it
// at; the output goes to <repo>/dist/console, where the secrets and scheduler services
// (libs/http-kit console-static.ts) and the Docker image (make build) look for it.
// `npm run dev -w services/console` serves it with hot reload and proxies the APIs to the
// same-origin gateway of `make dev` (CONSOLE_GATEWAY, default http://127.0.0.1:8080).
import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

const gateway = process.env.CONSOLE_GATEWAY ?? 'http://127.0.0.1:8080';
const apiPrefixes = ['/v1', '/v2', '/api', '/.well-known', '/controller', '/_gateway'];

export default defineConfig({
  base: '/ui/',
  plugins: [react()],
  build: {
    outDir: fileURLToPath(new URL('../../dist/console', import.meta.url)),
    emptyOutDir: true,
    // One CSS file, hashed assets only: nothing inline (the CSP allows 'self' alone).
    assetsInlineLimit: 0,
    cssCodeSplit: false,
    chunkSizeWarningLimit: 800,
  },
  server: {
    proxy: Object.fromEntries(apiPrefixes.map((p) => [p, { target: gateway, changeOrigin: false }])),
  },
});
