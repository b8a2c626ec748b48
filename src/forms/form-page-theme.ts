// The lead-form page's look: light and dark themes (the visitor's preference, or forced with
// ?theme=light|dark) and the form's accent colour. Text keeps 4.5:1 contrast in both themes (WCAG 1.4.3);
// docs/embedding-forms.md lists the pairs.

export type Theme = 'light' | 'dark';
export const DEFAULT_ACCENT = '#0b57d0';

/** `?theme=light|dark` forces a theme; anything else follows the visitor's `prefers-color-scheme`. */
export const forcedTheme = (query: URLSearchParams): Theme | null => {
  const theme = query.get('theme');
  return theme === 'light' || theme === 'dark' ? theme : null;
};

/** Each theme's colours; every text colour is checked against --bg and --field in test/unit/form-page-theme.test.ts. */
export const PALETTES: Record<Theme, Record<'bg' | 'fg' | 'muted' | 'border' | 'field' | 'error' | 'success', string>> = {
  light: { bg: '#ffffff', fg: '#1f1f1f', muted: '#595959', border: '#767676', field: '#ffffff', error: '#b00020', success: '#1e7b34' },
  dark: { bg: '#1f1f1f', fg: '#ececec', muted: '#bdbdbd', border: '#8f8f8f', field: '#2b2b2b', error: '#ff8a80', success: '#81c995' },
};

const vars = (theme: Theme) =>
  `color-scheme:${theme};${Object.entries(PALETTES[theme]).map(([name, value]) => `--${name}:${value}`).join(';')}`;

/** WCAG relative luminance of #rrggbb. */
function luminance(hex: string): number {
  const [r, g, b] = [1, 3, 5].map((i) => {
    const c = parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
}

/** WCAG contrast ratio of two #rrggbb colours, 1 to 21. */
export function contrastRatio(a: string, b: string): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi! + 0.05) / (lo! + 0.05);
}

/** Black or white, whichever reads better on `accent`: at least 4.58:1 for any colour. */
export const textOn = (accent: string): string =>
  contrastRatio(accent, '#ffffff') >= contrastRatio(accent, '#000000') ? '#ffffff' : '#000000';

/** The page's style sheet for a form's accent colour (already validated as #rrggbb; anything else = default). */
export function formPageStyle(accentColor: string | null): string {
  const accent = accentColor && /^#[0-9a-f]{6}$/i.test(accentColor) ? accentColor.toLowerCase() : DEFAULT_ACCENT;
  return `
:root{${vars('light')};--accent:${accent};--on-accent:${textOn(accent)};font-family:system-ui,sans-serif;line-height:1.5}
@media (prefers-color-scheme:dark){:root:not([data-theme=light]){${vars('dark')}}}
:root[data-theme=dark]{${vars('dark')}}
html{background:var(--bg);color:var(--fg)}body{margin:0;padding:1rem}main{max-width:36rem;margin:0 auto}
h1{font-size:1.4rem;margin:0 0 .5rem}.hint{margin:0 0 1rem;font-size:.9rem;color:var(--muted)}
.visually-hidden{position:absolute;width:1px;height:1px;margin:-1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
.field{margin:0 0 1rem}.field label{display:block;font-weight:600;margin-bottom:.25rem}
.check{display:flex;gap:.5rem;align-items:flex-start;flex-wrap:wrap}.check label{font-weight:400;margin:0}
input:not([type=checkbox]),select,textarea{box-sizing:border-box;width:100%;padding:.5rem;font:inherit;color:var(--fg);background:var(--field);border:1px solid var(--border);border-radius:4px}
input[type=checkbox]{accent-color:var(--accent)}input:focus,select:focus,textarea:focus{border-color:var(--accent)}
textarea{min-height:6rem}[aria-invalid=true]{border-color:var(--error);outline:1px solid var(--error)}
.error{color:var(--error);margin:.25rem 0 0;flex-basis:100%}.error:empty,#form-error:empty{display:none}
#form-error{border:2px solid var(--error);border-radius:4px;padding:.5rem .75rem;margin:0 0 1rem;color:var(--error)}
#form-error h2{font-size:1.1rem;margin:0}#form-error ul{margin:.25rem 0 0;padding-left:1.25rem}#form-error a{color:var(--error);font-weight:600}
#form-status:not(:empty){font-size:1.1rem;padding:1rem;border:1px solid var(--success);border-radius:4px}
button{font:inherit;padding:.6rem 1.2rem;border-radius:4px;border:0;background:var(--accent);color:var(--on-accent);cursor:pointer}
button:disabled{opacity:.6;cursor:progress}.hp{position:absolute;left:-10000px;width:1px;height:1px;overflow:hidden}
:focus-visible{outline:3px solid var(--fg);outline-offset:2px}`;
}
