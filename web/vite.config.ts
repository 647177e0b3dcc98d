/**
 * Vite configuration of the web app: two HTML entries (`index.html`, the dashboard; `claim.html`, the public claim
 * page) built into `web/dist`. `web/build.ts` builds with it; `npx vite web` serves it for development with the API
 * proxied to a running service (`SEALPAY_URL`, default http://127.0.0.1:8080).
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { UserConfig } from 'vite';

export const WEB_DIR = path.dirname(fileURLToPath(import.meta.url));
export const DIST_DIR = path.join(WEB_DIR, 'dist');

const service = process.env.SEALPAY_URL ?? 'http://127.0.0.1:8080';

const config: UserConfig = {
  root: WEB_DIR,
  base: '/',
  publicDir: false,
  logLevel: 'warn',
  clearScreen: false,
  build: {
    outDir: DIST_DIR,
    emptyOutDir: true,
    assetsDir: 'assets',
    // No data: URLs and no inline code: the pages run under a strict Content-Security-Policy.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    target: 'es2022',
    sourcemap: true,
    rolldownOptions: {
      input: { index: path.join(WEB_DIR, 'index.html'), claim: path.join(WEB_DIR, 'claim.html') },
    },
  },
  server: {
    proxy: { '/api': service, '/docs': service, '/rpc': service },
  },
};

export default config;
