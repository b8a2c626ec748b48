import type { CodegenConfig } from '@graphql-codegen/cli';

/** Typed documents for the operations the REST layer runs (npm run generate). */
const config: CodegenConfig = {
  schema: 'schema.graphql',
  documents: 'src/rest/operations/*.graphql',
  generates: {
    'src/rest/operations/generated.ts': {
      plugins: ['typescript-operations', 'typed-document-node'],
      config: {
        useTypeImports: true,
        enumsAsTypes: true,
        skipTypename: true,
        scalars: { DateTime: 'string', Date: 'string', JSON: 'unknown', ID: 'string' },
      },
    },
  },
};

export default config;
