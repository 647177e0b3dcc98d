/**
 * How the API reference at `/docs` (Scalar) is configured for people (issue 25 item 16): English, one light theme
 * whose text and method badges meet WCAG AA contrast, targets of at least 24 px, and a name on the buttons Scalar
 * leaves without one (its code-block copy buttons).
 */
import { createHash } from 'node:crypto';

/** Scalar's light palette, darkened where its greys and method colours fall under 4.5:1 on its backgrounds. */
const ACCESSIBLE_CSS = `
.light-mode {
  --scalar-color-2: #555555;
  --scalar-color-3: #5f5f5f;
  --scalar-color-accent: #0059b3;
  --scalar-color-green: #04704b;
  --scalar-color-red: #b00004;
  --scalar-color-yellow: #7a5c00;
  --scalar-color-blue: #005c99;
  --scalar-color-orange: #a33a00;
  --scalar-color-purple: #4a03bd;
  --scalar-color-query: #005c60;
  --scalar-sidebar-color-2: #555555;
  --scalar-sidebar-search-color: #5f5f5f;
}
/* The copy buttons and the sidebar's expand toggles (22 px by default). */
.scalar-app .scalar-code-copy,
.scalar-app .t-doc__sidebar button[aria-expanded] {
  min-width: 24px;
  min-height: 24px;
}
`;

/**
 * Runs in the page once Scalar has rendered (Scalar serializes this function into its page: it must stand alone).
 * Names the icon-only buttons Scalar renders without a name, now and as it renders more.
 */
const nameUnnamedButtons = () => {
  const name = () => {
    document.querySelectorAll('button.scalar-code-copy:not([aria-label])').forEach((button) => {
      button.setAttribute('aria-label', 'Copy code');
    });
  };
  name();
  new MutationObserver(name).observe(document.body, { childList: true, subtree: true });
};

export const API_REFERENCE_CONFIGURATION = {
  title: 'sealpay API reference',
  pageTitle: 'sealpay API reference',
  // No fonts from Scalar's CDN: the page's CSP allows nothing remote.
  withDefaultFonts: false,
  localization: { locale: 'en' },
  forceDarkModeState: 'light' as const,
  hideDarkModeToggle: true,
  customCss: ACCESSIBLE_CSS,
  // Scalar's hosted AI agent and MCP links (offered on localhost) call out to Scalar's services: not here.
  agent: { disabled: true },
  mcp: { disabled: true },
  onLoaded: nameUnnamedButtons,
};

/** `Content-Security-Policy` of the API reference: its own scripts and styles, nothing framed, nothing remote. */
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "worker-src 'self' blob:",
  "base-uri 'none'",
  "form-action 'self'",
  "object-src 'none'",
  "frame-ancestors 'none'",
];

/** A `<script>` without `src`: its text is what a CSP hash source covers. */
const INLINE_SCRIPT = /<script(?![^>]*\ssrc=)[^>]*>([\s\S]*?)<\/script>/g;

/**
 * The policy of one answer under `/docs`. Scripts come from the service alone; Scalar's page starts its bundle
 * with one inline script (`Scalar.createApiReference(…)`, written from the configuration above), allowed by its
 * SHA-256 rather than by `'unsafe-inline'`, so no other inline script (an injected one) runs. The hash is taken
 * of the page as sent: a Scalar upgrade that changes its bootstrap keeps working.
 */
export function contentSecurityPolicyOf(payload: unknown): string {
  const hashes =
    typeof payload === 'string'
      ? [...payload.matchAll(INLINE_SCRIPT)].map(
          ([, text]) =>
            `'sha256-${createHash('sha256')
              .update(text ?? '')
              .digest('base64')}'`,
        )
      : [];
  return [`script-src ${["'self'", ...hashes].join(' ')}`, ...CONTENT_SECURITY_POLICY].join('; ');
}

/** Scalar's page has no `lang`: it is English. */
export function withPageLanguage(payload: unknown): unknown {
  return typeof payload === 'string' && payload.startsWith('<!doctype html>')
    ? payload.replace('<html>', '<html lang="en">')
    : payload;
}
