// One kind of code per folder, the folders in layers (docs/development.md#layers): every import of
// src/ goes to its own folder or to one written after it in the docs' block, so no folder imports
// from above and none import each other in a circle. Type-only imports count as well.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const SRC = path.join(ROOT, 'src');

/** The imports that run up a layer, each with its reason at the import itself. */
const UP_ON_PURPOSE = new Set(['contacts/erase.ts -> imports/keys.ts']);

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.name === 'generated' ? [] : e.isDirectory() ? sources(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : [],
  );
}

/** `contacts/` for src/contacts/contact.service.ts, `app.ts` for src/app.ts. */
const folderOf = (relative: string) => (relative.includes('/') ? `${relative.split('/')[0]}/` : relative);

/** The block under "## Layers" in docs/development.md, top first: each line a layer's name, then its folders and files. */
function layerOrder(): string[] {
  const section = readFileSync(path.join(ROOT, 'docs/development.md'), 'utf8').split('\n## Layers\n')[1] ?? '';
  const block = /```\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
  return block.split('\n').flatMap((line) => line.trim().split(/\s+/).slice(1));
}

/** Every relative import of a source file, as paths under src/ (`.js` read as the `.ts` it is compiled from). */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specifiers = [...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)['"](\.{1,2}\/[^'"]+)['"]/gm)].map((m) => m[1]!);
  return specifiers.flatMap((specifier) => {
    const target = path.resolve(path.dirname(file), specifier).replace(/\.js$/, '.ts');
    const relative = path.relative(SRC, target).split(path.sep).join('/');
    return relative.startsWith('..') || relative.startsWith('generated/') ? [] : [relative];
  });
}

describe('the layers of src/ (docs/development.md#layers)', () => {
  const order = layerOrder();
  const files = sources(SRC).map((file) => ({ file, relative: path.relative(SRC, file).split(path.sep).join('/') }));

  it('names every folder and top-level file of src/ once', () => {
    expect(order.length).toBeGreaterThan(10);
    expect(new Set(order).size).toBe(order.length);
    expect([...new Set(files.map((f) => folderOf(f.relative)))].filter((folder) => !order.includes(folder))).toEqual([]);
  });

  it('every import goes to its own folder or to one after it, but those that say why they go up', () => {
    const up: string[] = [];
    for (const { file, relative } of files) {
      const from = folderOf(relative);
      for (const target of importsOf(file)) {
        const to = folderOf(target);
        if (!existsSync(path.join(SRC, target))) continue; // tsc names an import of a missing file
        if (to !== from && order.indexOf(to) < order.indexOf(from)) up.push(`${relative} -> ${target}`);
      }
    }
    expect(up.filter((arrow) => !UP_ON_PURPOSE.has(arrow))).toEqual([]);
    expect([...UP_ON_PURPOSE].filter((arrow) => !up.includes(arrow))).toEqual([]); // one no longer needed leaves the list
  });
});
