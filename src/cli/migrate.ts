import { applyMigrations, migrationStatus } from '../db/migrate.js';
import { parseOptions, usageError, type Command } from './command.js';

export const migrate: Command = {
  name: 'migrate',
  usage: '[deploy|status]',
  summary: 'apply pending migrations (deploy, the default) or list them (status: exit 1 unless in sync)',
  async run(args, io) {
    const { positionals } = parseOptions(this, args, {}, true);
    const [action = 'deploy', ...rest] = positionals;
    if ((action !== 'deploy' && action !== 'status') || rest.length > 0) throw usageError(this, `unknown action "${positionals.join(' ')}"`);
    const config = io.config();
    const where = config.databaseUrl ? 'PostgreSQL' : `PGlite in ${config.dataDir}`;
    return io.withDb(async (db) => {
      if (action === 'deploy') {
        const applied = await applyMigrations(db);
        io.out(applied.length ? `applied to ${where}: ${applied.join(', ')}` : `${where} is up to date`);
        return 0;
      }
      const status = await migrationStatus(db);
      io.out(`${where}: ${status.applied.length} applied, ${status.pending.length} pending`);
      const groups = { pending: status.pending, failed: status.failed, edited: status.edited, 'not in the folder': status.unknown };
      for (const [label, names] of Object.entries(groups)) if (names.length) io.out(`${label}: ${names.join(', ')}`);
      // Like `prisma migrate status`: non-zero when the database is not exactly the folder.
      return status.pending.length || status.failed.length || status.edited.length || status.unknown.length ? 1 : 0;
    }, { migrate: false });
  },
};
