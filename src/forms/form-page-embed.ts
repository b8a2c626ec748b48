// GET /forms/embed.js: the embed snippet. A page adds
//   <script src="https://crm.example.com/forms/embed.js" data-form="FORM_ID" async></script>
// and gets the form's page in an <iframe> right there, as tall as its content (docs/embedding-forms.md).

import { Response } from '../http/response.js';
import { SIZE_MESSAGE } from './form-page.js';

export const EMBED_PATH = '/forms/embed.js';

/**
 * The frame's height until the page reports its own, and the height docs/forms.md gives a plain
 * <iframe>: a seven-field form (name, e-mail, phone, company, a choice, a message, a consent box) and
 * its Send button fit at any width from 320 px with the page's script off (its <noscript> line shown):
 * 848 px at 320, the tallest. test/e2e/form-embed.test.ts measures it.
 */
export const FALLBACK_HEIGHT = 860;

// The same for every form: it reads what it needs from its own <script> tag. Plain ES2017, no globals.
// Size messages ({type: SIZE_MESSAGE, form, height, title}, posted by the page's script in
// src/forms/form-page.ts) are believed only from this service's origin, from this script's own frame,
// and for its own form.
export const EMBED_SCRIPT = `(() => {
  const script = document.currentScript;
  if (!script || !script.src) return;
  if (script.parentElement === document.head) { console.error('lead form embed: put the <script> in <body>, where the form should appear'); return; }
  const origin = new URL(script.src).origin;
  const form = script.dataset.form;
  if (!form) { console.error('lead form embed: add data-form="<form id>" to the <script> tag'); return; }
  const url = new URL('/forms/' + encodeURIComponent(form), origin);
  new URLSearchParams(script.dataset.query || '').forEach((value, key) => url.searchParams.set(key, value));
  const theme = script.dataset.theme;
  if (theme === 'light' || theme === 'dark') url.searchParams.set('theme', theme);
  const frame = document.createElement('iframe');
  frame.src = url.href;
  frame.title = script.dataset.title || 'Contact form';
  frame.style.cssText = 'display:block;width:100%;border:0;height:' + (Number(script.dataset.height) > 0 ? Number(script.dataset.height) : ${FALLBACK_HEIGHT}) + 'px';
  script.insertAdjacentElement('afterend', frame);
  window.addEventListener('message', (event) => {
    if (event.origin !== origin || event.source !== frame.contentWindow) return;
    const data = event.data;
    if (!data || data.type !== '${SIZE_MESSAGE}' || !Number.isFinite(data.height)) return;
    if (typeof data.form !== 'string' || data.form.toLowerCase() !== form.toLowerCase()) return;
    frame.style.height = Math.min(Math.max(Math.ceil(data.height), 0), 20000) + 'px';
    if (!script.dataset.title && typeof data.title === 'string' && data.title) frame.title = data.title.slice(0, 200);
  });
})();
`;

/** The snippet: cacheable (it is the same for every form), loadable by any site, even one that sets COEP. */
export function embedScriptResponse(request: Request): Response {
  return new Response(request.method === 'HEAD' ? null : EMBED_SCRIPT, {
    status: 200,
    headers: {
      'Content-Type': 'text/javascript; charset=utf-8',
      'Cache-Control': 'public, max-age=3600',
      'Cross-Origin-Resource-Policy': 'cross-origin',
    },
  });
}
