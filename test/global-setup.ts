import type { TestProject } from 'vitest/node';
import { createTemplate, dropTemplate, type TemplateRef } from './helpers/database.js';
import { IN_CI, REAL_SERVICES, unsetVariables } from './helpers/prerequisites.js';

declare module 'vitest' {
  export interface ProvidedContext {
    template: TemplateRef;
  }
}

/** One migrated template database per run; every test file clones it (test/helpers/database.ts). */
export default async function setup(project: TestProject) {
  const template = await createTemplate();
  project.provide('template', template);
  return async () => {
    await dropTemplate(template);
    // The one line that says why some tests were skipped and what runs them (docs/testing-prerequisites.md).
    const unset = unsetVariables('DATABASE_URL', 'REDIS_URL');
    if (unset && !IN_CI) {
      const set = Object.entries(REAL_SERVICES).filter(([name]) => !process.env[name]?.trim()).map(([name, url]) => `${name}=${url}`);
      process.stderr.write(`Skipped the tests that need a real PostgreSQL or Redis: set ${set.join(' ')} to run them.\n`);
    }
  };
}
