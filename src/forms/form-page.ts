// The embeddable lead-form page: plain HTML, one inline script (allowed by a per-response nonce),
// no external assets. Every string that comes from a form's owner goes through escapeHtml.
import { forcedTheme, formPageStyle } from './form-page-theme.js';

export type PublicFormField = {
  key: string;
  label: string;
  type: 'text' | 'email' | 'phone' | 'textarea' | 'select' | 'checkbox' | 'hidden';
  required: boolean;
  options: string[];
  maxLength: number;
  autocomplete: string | null;
};
export type PublicForm = {
  id: string;
  name: string;
  successMessage: string;
  honeypotField: string | null;
  accentColor: string | null;
  showTitle: boolean;
  fields: PublicFormField[];
};

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const escapeHtml = (value: string): string => value.replace(/[&<>"']/g, (c) => ENTITIES[c]!);

/** Scripts and styles only with this response's nonce; fetch to this origin only; any site may frame it. */
export function contentSecurityPolicy(nonce: string, withScript: boolean): string {
  return [
    "default-src 'none'",
    withScript ? `script-src 'nonce-${nonce}'` : null,
    `style-src 'nonce-${nonce}'`,
    withScript ? "connect-src 'self'" : null,
    "form-action 'self'",
    "base-uri 'none'",
    'frame-ancestors *',
  ].filter(Boolean).join('; ');
}

// The same for every form: it reads what it needs from the markup (data-action, field names).
const SCRIPT = `
(() => {
  const form = document.getElementById('lead-form');
  const summary = document.getElementById('form-error');
  const status = document.getElementById('form-status');
  const button = form.querySelector('button[type=submit]');
  const labelOf = (key) => { const el = form.elements.namedItem(key); const l = el && el.labels && el.labels[0]; return l ? l.dataset.text : key; };
  const clear = () => {
    summary.textContent = '';
    for (const p of form.querySelectorAll('.error')) p.textContent = '';
    for (const el of form.querySelectorAll('[aria-invalid]')) el.removeAttribute('aria-invalid');
  };
  const problem = (text, lines = []) => {
    summary.textContent = text;
    if (lines.length) { const ul = document.createElement('ul'); for (const line of lines) { const li = document.createElement('li'); li.textContent = line; ul.append(li); } summary.append(ul); }
  };
  const redirectTo = (value) => {
    if (typeof value !== 'string' || !value) return null;
    try { const url = new URL(value, location.href); return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null; } catch { return null; }
  };
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clear();
    const data = {};
    for (const el of form.elements) {
      if (!el.name || el.disabled) continue;
      if (el.type === 'checkbox') { if (el.checked) data[el.name] = el.value; } else data[el.name] = el.value;
    }
    const metadata = { page: location.href.slice(0, 2048) };
    if (document.referrer) metadata.referrer = document.referrer.slice(0, 2048);
    button.disabled = true;
    form.setAttribute('aria-busy', 'true');
    let response, body = null;
    try {
      response = await fetch(form.dataset.action, { method: 'POST', credentials: 'omit', headers: { 'Content-Type': 'application/json', Accept: 'application/json' }, body: JSON.stringify({ data, metadata }) });
      body = await response.json().catch(() => null);
    } catch {
      response = null;
    }
    button.disabled = false;
    form.removeAttribute('aria-busy');
    if (response && response.ok && body && body.success) {
      const target = redirectTo(body.redirectUrl);
      if (target) { location.assign(target); return; }
      form.hidden = true;
      status.textContent = body.successMessage || form.dataset.success;
      status.focus();
      return;
    }
    let first = null;
    if (!response) problem('The form could not be sent: no connection to the server. Please try again.');
    else if (response.status === 400 && body && body.details) {
      const other = [];
      for (const [key, messages] of Object.entries(body.details)) {
        const el = form.elements.namedItem(key);
        const note = document.getElementById('e-' + key);
        if (el && note && el.type !== 'hidden') {
          note.textContent = messages.join(' ');
          el.setAttribute('aria-invalid', 'true');
          first = first || el;
        } else other.push(labelOf(key) + ': ' + messages.join(' '));
      }
      problem('Please correct the fields marked below.', other);
    } else if (response.status === 429) {
      const wait = Number(response.headers.get('Retry-After'));
      problem('Too many submissions from your network. Please try again' + (wait > 0 ? ' in ' + wait + ' seconds.' : ' later.'));
    } else if (response.status === 404) problem('This form is no longer accepting submissions.');
    else problem('The form could not be sent (' + ((body && body.error) || 'HTTP ' + response.status) + '). Please try again.');
    (first || summary).focus();
  });
  // Framed (e.g. by /forms/embed.js): tell the embedding page this page's height whenever it changes, so
  // the frame fits (errors never push Send out of view). Only a height and the title: any origin may read them.
  if (window.parent !== window && window.ResizeObserver) {
    let last = 0;
    const report = () => {
      const height = Math.ceil(document.documentElement.getBoundingClientRect().height);
      if (height !== last) { last = height; window.parent.postMessage({ type: 'crm-lead-form:size', height, title: document.title }, '*'); }
    };
    new ResizeObserver(report).observe(document.documentElement);
    report();
  }
})();`;

function control(field: PublicFormField, prefill: string | null): string {
  const id = `f-${field.key}`;
  const name = escapeHtml(field.key);
  const common = [
    `id="${escapeHtml(id)}"`, `name="${name}"`, `aria-describedby="e-${name}"`,
    field.required ? 'required' : '', field.autocomplete ? `autocomplete="${escapeHtml(field.autocomplete)}"` : '',
  ].filter(Boolean).join(' ');
  const label = `<label for="${escapeHtml(id)}" data-text="${escapeHtml(field.label)}">${escapeHtml(field.label)}${field.required ? '<span aria-hidden="true"> *</span>' : ''}</label>`;
  const error = `<p class="error" id="e-${name}"></p>`;
  switch (field.type) {
    case 'hidden':
      return `<input type="hidden" name="${name}" value="${escapeHtml((prefill ?? '').slice(0, field.maxLength))}">`;
    case 'checkbox':
      return `<div class="field check"><input type="checkbox" value="yes" ${common}>${label}${error}</div>`;
    case 'textarea':
      return `<div class="field">${label}<textarea ${common} maxlength="${field.maxLength}"></textarea>${error}</div>`;
    case 'select': {
      // An explicit value: a browser would collapse the spaces inside an option's text.
      const options = field.options.map((o) => `<option value="${escapeHtml(o)}">${escapeHtml(o)}</option>`).join('');
      return `<div class="field">${label}<select ${common}><option value="">Choose…</option>${options}</select>${error}</div>`;
    }
    default: {
      const type = field.type === 'phone' ? 'tel' : field.type;
      return `<div class="field">${label}<input type="${type}" ${common} maxlength="${field.maxLength}">${error}</div>`;
    }
  }
}

// Off-screen and out of the tab order and the accessibility tree: only a bot fills it in.
const honeypot = (key: string) =>
  `<div class="hp" aria-hidden="true"><label for="hp-${escapeHtml(key)}">Leave this empty</label><input type="text" id="hp-${escapeHtml(key)}" name="${escapeHtml(key)}" tabindex="-1" autocomplete="off"></div>`;

type PageOptions = { script: boolean; query: URLSearchParams; accentColor?: string | null };

function htmlPage(title: string, nonce: string, body: string, { script, query, accentColor = null }: PageOptions): string {
  const theme = forcedTheme(query);
  return `<!doctype html>
<html lang="en"${theme ? ` data-theme="${theme}"` : ''}>
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style nonce="${nonce}">${formPageStyle(accentColor)}</style>
</head>
<body>
<main>
${body}
</main>
${script ? `<script nonce="${nonce}">${SCRIPT}</script>\n` : ''}</body>
</html>
`;
}

/**
 * The form page. Hidden fields take their value from the page's query string (e.g. ?campaign=spring);
 * `?theme=light|dark` forces a theme (docs/embedding-forms.md).
 */
export function renderFormPage(form: PublicForm, nonce: string, query: URLSearchParams): string {
  const anyRequired = form.fields.some((f) => f.required && f.type !== 'hidden');
  const body = `<h1 id="form-title"${form.showTitle ? '' : ' class="visually-hidden"'}>${escapeHtml(form.name)}</h1>
<form id="lead-form" method="post" aria-labelledby="form-title" data-action="/api/v1/forms/${encodeURIComponent(form.id)}/submit" data-success="${escapeHtml(form.successMessage)}">
${anyRequired ? '<p class="hint">Fields marked * are required.</p>\n' : ''}<div id="form-error" role="alert" tabindex="-1"></div>
${form.fields.map((field) => control(field, query.get(field.key))).join('\n')}
${form.honeypotField ? honeypot(form.honeypotField) : ''}
<button type="submit">Send</button>
</form>
<div id="form-status" role="status" tabindex="-1"></div>
<noscript><p>Sending this form needs JavaScript.</p></noscript>`;
  return htmlPage(form.name, nonce, body, { script: true, query, accentColor: form.accentColor });
}

/** A plain page for "not found" and other refusals, framable like the form itself. */
export function renderMessagePage(title: string, text: string, nonce: string, query = new URLSearchParams()): string {
  return htmlPage(title, nonce, `<h1>${escapeHtml(title)}</h1>\n<p>${escapeHtml(text)}</p>`, { script: false, query });
}
