// Writes schema.graphql from the Pothos schema, and the REST answers' fragments from the field specs
// (npm run generate); test/unit/generated-files.test.ts fails when either is stale.
import { writeFileSync } from 'node:fs';
import { printedSchema } from '../src/schema.js';
import { FRAGMENT_FILES } from '../src/rest/record-fragments.js';

writeFileSync(new URL('../schema.graphql', import.meta.url), printedSchema());
for (const [file, text] of Object.entries(FRAGMENT_FILES)) writeFileSync(new URL(`../${file}`, import.meta.url), text());
console.log(`schema.graphql and ${Object.keys(FRAGMENT_FILES).join(', ')} written`);
