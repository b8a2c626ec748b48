import type { TestProject } from 'vitest/node';
import { createTemplate, dropTemplate, type TemplateRef } from './helpers/database.js';

declare module 'vitest' {
  export interface ProvidedContext {
    template: TemplateRef;
  }
}

/** One migrated template database per run; every test file clones it (test/helpers/database.ts). */
export default async function setup(project: TestProject) {
  const template = await createTemplate();
  project.provide('template', template);
  return () => dropTemplate(template);
}
