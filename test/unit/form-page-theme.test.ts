import { describe, expect, it } from 'vitest';
import { contrastRatio, DEFAULT_ACCENT, formPageStyle, PALETTES, textOn } from '../../src/forms/form-page-theme.js';

// The lead-form page keeps WCAG 1.4.3's 4.5:1 for its text in both themes (docs/embedding-forms.md);
// test/e2e/form-embed.test.ts measures the same on the rendered page in Chromium.
describe('lead-form page colours', () => {
  it('contrastRatio is WCAG\'s: black on white is 21:1, a colour on itself 1:1', () => {
    expect(contrastRatio('#000000', '#ffffff')).toBeCloseTo(21, 5);
    expect(contrastRatio('#767676', '#767676')).toBe(1);
    expect(contrastRatio('#767676', '#ffffff')).toBeCloseTo(4.54, 2);
  });

  it.each(Object.entries(PALETTES))('%s theme: text, hints and errors are at least 4.5:1 on the page and in fields', (_, p) => {
    for (const text of [p.fg, p.muted, p.error]) {
      for (const background of [p.bg, p.field]) expect(contrastRatio(text, background), `${text} on ${background}`).toBeGreaterThanOrEqual(4.5);
    }
    // Borders and the success frame are not text: 3:1 (WCAG 1.4.11).
    for (const line of [p.border, p.success]) expect(contrastRatio(line, p.bg), line).toBeGreaterThanOrEqual(3);
  });

  it('the button text is black or white, whichever keeps 4.5:1 on any accent colour', () => {
    for (let v = 0; v < 0x1000000; v += 0x010203) {
      const accent = `#${v.toString(16).padStart(6, '0')}`;
      expect(contrastRatio(textOn(accent), accent), accent).toBeGreaterThanOrEqual(4.5);
    }
  });

  it('an accent that is not #rrggbb falls back to the default (the style sheet is never injectable)', () => {
    expect(formPageStyle('red;}body{display:none')).toContain(`--accent:${DEFAULT_ACCENT}`);
    expect(formPageStyle('#FFAA00')).toContain('--accent:#ffaa00;--on-accent:#000000');
  });
});
