// Writes schema.graphql from the Pothos schema, and the REST answers' fragments from the field specs
// (npm run generate); test/unit/generated-files.test.ts fails when either is stale.
import { writeFileSync } from 'node:fs';
import { printedSchema } from '../src/schema.js';
import { FRAGMENTS_FILE, recordFragments } from '../src/rest/record-fragments.js';

writeFileSync(new URL('../schema.graphql', import.meta.url), printedSchema());
writeFileSync(new URL(`../${FRAGMENTS_FILE}`, import.meta.url), recordFragments());
console.log(`schema.graphql and ${FRAGMENTS_FILE} written`);
