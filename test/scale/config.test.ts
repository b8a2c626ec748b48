import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

// The scale-out variables (docs/scaling.md): checked at start like every other, one line per problem.

const problems = (env: Record<string, string>): string[] => {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message.split('\n');
  }
  return [];
};

const PRIMARY = 'postgresql://app@db.example:5432/crm';

describe('scale-out configuration', () => {
  it('defaults: no direct URL, a 60 s migration lock wait, no replicas, 1 s of replica lag allowed', () => {
    expect(loadConfig({ DATABASE_URL: PRIMARY })).toMatchObject({
      databaseDirectUrl: undefined,
      migrationLockTimeoutMs: 60_000,
      databaseReplicaUrls: [],
      databaseReplicaMaxLagMs: 1_000,
    });
  });

  it('DATABASE_REPLICA_URLS is a comma-separated list of PostgreSQL URLs; blanks between commas are ignored', () => {
    const config = loadConfig({
      DATABASE_URL: PRIMARY,
      DATABASE_DIRECT_URL: 'postgres://app@db.example:5433/crm',
      DATABASE_REPLICA_URLS: ' postgresql://r1.example/crm, ,postgres://r2.example/crm ',
      DATABASE_REPLICA_MAX_LAG_MS: '250',
      MIGRATION_LOCK_TIMEOUT_MS: '0',
    });
    expect(config.databaseReplicaUrls).toEqual(['postgresql://r1.example/crm', 'postgres://r2.example/crm']);
    expect(config).toMatchObject({ databaseDirectUrl: 'postgres://app@db.example:5433/crm', databaseReplicaMaxLagMs: 250, migrationLockTimeoutMs: 0 });
  });

  it('each bad value is one line naming the variable (and the list entry)', () => {
    expect(
      problems({
        DATABASE_URL: PRIMARY,
        DATABASE_DIRECT_URL: 'mysql://x/y',
        DATABASE_REPLICA_URLS: 'postgresql://ok/crm,not a url',
        DATABASE_REPLICA_MAX_LAG_MS: '0',
        MIGRATION_LOCK_TIMEOUT_MS: 'soon',
      }),
    ).toEqual([
      'DATABASE_DIRECT_URL must be a postgresql: or postgres: URL',
      'MIGRATION_LOCK_TIMEOUT_MS must be an integer from 0 to 3600000 (got "soon")',
      'DATABASE_REPLICA_URLS entry 2 must be a postgresql: or postgres: URL',
      'DATABASE_REPLICA_MAX_LAG_MS must be an integer from 1 to 3600000 (got "0")',
    ]);
  });

  it('a direct URL or replicas without DATABASE_URL is refused: the embedded database has neither', () => {
    expect(problems({ DATABASE_REPLICA_URLS: 'postgresql://r1.example/crm' })).toEqual([
      'DATABASE_DIRECT_URL and DATABASE_REPLICA_URLS need DATABASE_URL (the embedded database has neither)',
    ]);
    expect(problems({ DATABASE_DIRECT_URL: PRIMARY })).toHaveLength(1);
  });
});
