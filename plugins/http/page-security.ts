/**
 * The headers every HTML page of the server is sent with (the launcher at `GET /`, the explorer,
 * the OpenAPI UI): the explorer holds a session token, so its pages run only the server's own
 * scripts. The Content-Security-Policy allows scripts from the server's files and, by hash, the
 * page's own inline scripts as served (the explorer's import map): a script injected into the page
 * later, inline or as an event handler attribute, does not run. Styles come from files only
 * (style properties set by scripts are not affected). `connect-src 'self'` covers the page's
 * fetches and its WebSocket to `/mqtt` on the same origin. No page may be framed.
 *
 * Computed once per page (pages are fixed when the server starts), never per request.
 */
import { createHash } from 'node:crypto';

/** `<script>` elements with a body, and their attributes. */
const INLINE_SCRIPT = /<script\b([^>]*)>([\s\S]*?)<\/script\s*>/gi;
const SCRIPT_TYPE = /\btype\s*=\s*["']?([^"'\s>]+)/i;
/** Types a browser runs (CSP applies to them); other types (`application/json`) are data blocks. */
const RUN_TYPES = new Set(['', 'module', 'importmap', 'text/javascript', 'application/javascript']);

/** `'sha256-…'` sources for the inline scripts a browser would run in `html`. */
export function inlineScriptHashes(html: string): string[] {
  const hashes: string[] = [];
  for (const [, attributes, body] of html.matchAll(INLINE_SCRIPT)) {
    if (/\bsrc\s*=/i.test(attributes) || body === '') continue;
    const type = (SCRIPT_TYPE.exec(attributes)?.[1] ?? '').toLowerCase();
    if (!RUN_TYPES.has(type)) continue;
    hashes.push(hashSource(body));
  }
  return hashes;
}

/** `'sha256-…'` of a text (an inline script's or `<style>` element's content). */
function hashSource(text: string): string {
  return `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
}

/** The Content-Security-Policy of a page whose inline scripts and styles have these hashes. */
export function contentSecurityPolicy(scriptHashes: readonly string[] = [], styleHashes: readonly string[] = []): string {
  return [
    "default-src 'self'",
    `script-src 'self'${scriptHashes.map((hash) => ` ${hash}`).join('')}`,
    "script-src-attr 'none'",
    // mqtt.js runs its keepalive timers in a worker it makes from a blob (timers of hidden tabs
    // are throttled); making a blob needs a script that already runs.
    "worker-src 'self' blob:",
    `style-src 'self'${styleHashes.map((hash) => ` ${hash}`).join('')}`,
    "img-src 'self' data:",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/**
 * All the security headers for `html` (the page as it will be sent). `inlineStyles`: the exact
 * text of `<style>` elements the page's own scripts add (allowed by hash, nothing else inline).
 */
export function pageSecurityHeaders(html = '', inlineStyles: readonly string[] = []): Record<string, string> {
  return {
    'content-security-policy': contentSecurityPolicy(inlineScriptHashes(html), inlineStyles.map(hashSource)),
    'x-content-type-options': 'nosniff',
    // A page's address (it names topics, tables, clients) is not sent along with its requests or links.
    'referrer-policy': 'no-referrer',
    // frame-ancestors for browsers that predate it.
    'x-frame-options': 'DENY',
    'cross-origin-opener-policy': 'same-origin',
  };
}
