import { readFile } from 'node:fs/promises';
import { createLeadForm, createLeadFormInput } from '../forms/form.service.js';
import { SYSTEM } from '../events/types.js';
import type { PrismaClient } from '../generated/prisma/client.js';
import { CliError, findAccount, parseOptions, requireOption, validate, type Command } from './command.js';

const FORM_KEYS = new Set(Object.keys(createLeadFormInput.shape).filter((key) => key !== 'accountId'));
const FIELD_KEYS = new Set(Object.keys(createLeadFormInput.shape.fields.element.shape));

/** Reads a form definition: the shape of Mutation.createLeadForm's input, without `accountId`. */
export async function readFormFile(file: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new CliError([`cannot read ${file}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message}`]);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new CliError([`${file} is not valid JSON: ${(error as Error).message}`]);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new CliError([`${file} must hold a JSON object`]);
  return value as Record<string, unknown>;
}

// The zod schema drops keys it does not know; a typo in a hand-written file should not vanish silently.
function unknownKeys(form: Record<string, unknown>): string[] {
  const problems = Object.keys(form)
    .filter((key) => !FORM_KEYS.has(key))
    .map((key) => (key === 'accountId' ? 'accountId: Given by --account; leave it out of the file' : `${key}: Unknown field`));
  if (Array.isArray(form.fields)) {
    form.fields.forEach((field, index) => {
      if (typeof field !== 'object' || field === null) return;
      for (const key of Object.keys(field)) if (!FIELD_KEYS.has(key)) problems.push(`fields.${index}.${key}: Unknown field`);
    });
  }
  return problems;
}

/** Validates with the same rules as Mutation.createLeadForm, then creates the form and its fields. */
export async function createFormFromDefinition(db: PrismaClient, accountId: string, definition: Record<string, unknown>) {
  const problems = unknownKeys(definition);
  if (problems.length > 0) throw new CliError(problems);
  const input = validate(createLeadFormInput, { ...definition, accountId }, { accountId: '--account' });
  await findAccount(db, input.accountId);
  return createLeadForm(db, input, SYSTEM);
}

export const formCreate: Command = {
  name: 'form:create',
  usage: '--account <uuid> --file <form.json>',
  summary: 'create a lead form from a JSON file (the createLeadForm input without accountId); prints its id',
  async run(args, io) {
    const { values } = parseOptions(this, args, { account: { type: 'string' }, file: { type: 'string' } });
    const account = requireOption(this, values, 'account');
    const definition = await readFormFile(requireOption(this, values, 'file'));
    const form = await io.withDb((db) => createFormFromDefinition(db.prisma, account, definition));
    io.out(form.id);
  },
};
