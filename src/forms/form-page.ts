// The embeddable lead-form page: plain HTML, one inline script (allowed by a per-response nonce),
// no external assets. Every string that comes from a form's owner goes through escapeHtml.
import { regexes } from 'zod';
import { forcedTheme, formPageStyle } from './form-page-theme.js';

export type PublicFormField = {
  key: string;
  label: string;
  type: 'text' | 'email' | 'phone' | 'textarea' | 'select' | 'checkbox' | 'hidden' | 'number' | 'date' | 'url';
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

// The address rule the service applies (`z.email()` in src/validation.ts is zod's `regexes.email`),
// so the page refuses exactly what the submit would; test/unit/form-validation.test.ts keeps them equal.
export const EMAIL_PATTERN = regexes.email.source;

/** What the framed page posts to its parent (docs/embedding-forms.md): `{type, form, height, title}`. */
export const SIZE_MESSAGE = 'crm-lead-form:size';

// The same for every form: it reads what it needs from the markup (data-action, field names).
// Its own error path (GOV.UK's error summary pattern): the form has `novalidate`, so no browser pop-up;
// on submit every problem shows next to its field (the <p id="e-KEY"> its aria-describedby names) and
// as a link in the summary at the top, which takes focus; the service's 400 (details by field key)
// goes through the same path. A field is marked aria-invalid only once the visitor has changed it or
// tried to send. The rules are the service's (src/forms/submission.service.ts) as far as the page
// knows them; what only the service knows (a contact column's length) comes back in its 400.
const SCRIPT = `
(() => {
  const form = document.getElementById('lead-form');
  const summary = document.getElementById('form-error');
  const status = document.getElementById('form-status');
  const button = form.querySelector('button[type=submit]');
  const EMAIL = new RegExp(${JSON.stringify(EMAIL_PATTERN)});
  const controls = () => Array.from(form.querySelectorAll('input[id^="f-"], select[id^="f-"], textarea[id^="f-"]'));
  const isControl = (el) => el && el.id && el.id.startsWith('f-') && el.form === form;
  const labelOf = (key) => {
    const el = form.elements.namedItem(key);
    const text = el && ((el.labels && el.labels[0] && el.labels[0].dataset.text) || el.dataset.text);
    return text || key;
  };
  const valueOf = (el) => (el.type === 'checkbox' ? (el.checked ? el.value : '') : el.value);
  // The service's rules (trimmed; required; length; e-mail for an e-mail field or one that fills the contact's e-mail).
  const check = (el) => {
    const value = valueOf(el).trim();
    if (value === '') return el.getAttribute('aria-required') === 'true' ? 'Required' : null;
    const max = Number(el.getAttribute('maxlength'));
    if (max > 0 && value.length > max) return 'Must be at most ' + max + ' characters';
    if ((el.type === 'email' || el.getAttribute('autocomplete') === 'email') && !EMAIL.test(value)) return 'Must be a valid e-mail address';
    return null;
  };
  // The message next to a field; aria-invalid goes with it, never before.
  const mark = (el, message) => {
    const note = document.getElementById('e-' + el.name);
    if (!note) return;
    note.textContent = '';
    if (message) {
      const prefix = document.createElement('span');
      prefix.className = 'visually-hidden';
      prefix.textContent = 'Error: ';
      note.append(prefix, message);
      el.setAttribute('aria-invalid', 'true');
    } else el.removeAttribute('aria-invalid');
  };
  // The summary at the top: a heading and, per problem, a link to its field (or the text, for a field the visitor cannot reach).
  const problem = (title, entries = []) => {
    summary.textContent = '';
    const heading = document.createElement('h2');
    heading.textContent = title;
    summary.append(heading);
    if (entries.length) {
      const ul = document.createElement('ul');
      for (const entry of entries) {
        const li = document.createElement('li');
        if (entry.el) {
          const a = document.createElement('a');
          a.href = '#' + entry.el.id;
          a.dataset.field = entry.el.id;
          a.textContent = entry.text;
          li.append(a);
        } else li.textContent = entry.text;
        ul.append(li);
      }
      summary.append(ul);
    }
    summary.focus();
  };
  summary.addEventListener('click', (event) => {
    const link = event.target.closest && event.target.closest('a[data-field]');
    const el = link && document.getElementById(link.dataset.field);
    if (!el) return;
    event.preventDefault(); // no jump to the fragment: the field and its label come into view, and the field takes focus
    (el.closest('.field') || el).scrollIntoView({ block: 'center' });
    el.focus({ preventScroll: true });
  });
  // Touched: a value changed and committed (leaving a text field, picking an option, ticking a box).
  form.addEventListener('change', (event) => { if (isControl(event.target)) mark(event.target, check(event.target)); });
  // A field already marked is checked again as the visitor types, so the message goes as soon as it is right.
  form.addEventListener('input', (event) => {
    const el = event.target;
    if (isControl(el) && el.getAttribute('aria-invalid') === 'true') mark(el, check(el));
  });
  const redirectTo = (value) => {
    if (typeof value !== 'string' || !value) return null;
    try { const url = new URL(value, location.href); return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null; } catch { return null; }
  };
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    if (form.getAttribute('aria-busy') === 'true') return;
    const wrong = [];
    for (const el of controls()) {
      const message = check(el);
      mark(el, message);
      if (message) wrong.push({ el, text: labelOf(el.name) + ': ' + message });
    }
    if (wrong.length) { problem('There is a problem', wrong); return; }
    summary.textContent = '';
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
    if (!response) problem('The form could not be sent: no connection to the server. Please try again.');
    else if (response.status === 400 && body && body.details && typeof body.details === 'object') {
      // The service's details, by field key: each by its label, next to its field when the visitor can reach it.
      const entries = [];
      for (const [key, messages] of Object.entries(body.details)) {
        const text = Array.isArray(messages) ? messages.join(' ') : String(messages);
        const el = form.elements.namedItem(key);
        if (isControl(el)) { mark(el, text); entries.push({ el, text: labelOf(key) + ': ' + text }); }
        else entries.push({ text: labelOf(key) + ': ' + text });
      }
      problem('There is a problem', entries);
    } else if (response.status === 429) {
      const wait = Number(response.headers.get('Retry-After'));
      problem('Too many submissions from your network. Please try again' + (wait > 0 ? ' in ' + wait + ' seconds.' : ' later.'));
    } else if (response.status === 404) problem('This form is no longer accepting submissions.');
    else problem('The form could not be sent (' + ((body && body.error) || 'HTTP ' + response.status) + '). Please try again.');
  });
  // Framed (by /forms/embed.js or a plain <iframe> with the documented listener): tell the embedding page
  // this page's height whenever it changes, so the frame fits (errors never push Send out of view). Only a
  // height, the form's id and the title: any origin may read them.
  if (window.parent !== window) {
    let last = 0;
    const report = () => {
      const height = Math.ceil(document.documentElement.getBoundingClientRect().height);
      if (height !== last) { last = height; window.parent.postMessage({ type: '${SIZE_MESSAGE}', form: form.dataset.form, height, title: document.title }, '*'); }
    };
    if (window.ResizeObserver) new ResizeObserver(report).observe(document.documentElement);
    else addEventListener('resize', report);
    report();
  }
})();`;

function control(field: PublicFormField, prefill: string | null): string {
  const id = `f-${field.key}`;
  const name = escapeHtml(field.key);
  // aria-required, not `required`: the attribute makes a control invalid from the moment the page loads
  // (valueMissing), and Chromium exposes that native validity as "invalid" on an untouched select or
  // checkbox, `novalidate` or not. aria-required says "required" to assistive technology with no
  // constraint validation behind it; the page's script checks it (and marks aria-invalid) only once
  // the field is touched or a submit is tried. The visible " *" and the hint say it to everyone else.
  const common = [
    `id="${escapeHtml(id)}"`, `name="${name}"`, `aria-describedby="e-${name}"`,
    field.required ? 'aria-required="true"' : '', field.autocomplete ? `autocomplete="${escapeHtml(field.autocomplete)}"` : '',
  ].filter(Boolean).join(' ');
  const label = `<label for="${escapeHtml(id)}" data-text="${escapeHtml(field.label)}">${escapeHtml(field.label)}${field.required ? '<span aria-hidden="true"> *</span>' : ''}</label>`;
  const error = `<p class="error" id="e-${name}"></p>`;
  switch (field.type) {
    case 'hidden':
      // data-text: the label the error summary names it by, should the service refuse its value.
      return `<input type="hidden" name="${name}" value="${escapeHtml((prefill ?? '').slice(0, field.maxLength))}" data-text="${escapeHtml(field.label)}">`;
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
      // A number takes decimals (the service's rule, docs/custom-fields.md#types), not the browser's default whole steps.
      const step = field.type === 'number' ? ' step="any"' : '';
      return `<div class="field">${label}<input type="${type}"${step} ${common} maxlength="${field.maxLength}">${error}</div>`;
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
<form id="lead-form" method="post" novalidate aria-labelledby="form-title" data-form="${escapeHtml(form.id)}" data-action="/api/v1/forms/${encodeURIComponent(form.id)}/submit" data-success="${escapeHtml(form.successMessage)}">
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
