// Writes schema.graphql from the Pothos schema (npm run generate); test/unit/schema.test.ts fails when it is stale.
import { writeFileSync } from 'node:fs';
import { printedSchema } from '../src/schema.js';

writeFileSync(new URL('../schema.graphql', import.meta.url), printedSchema());
console.log('schema.graphql written');
