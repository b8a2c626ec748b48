/** The answers of delete* and eraseContact (docs/decisions.md §12). */
import { builder } from './builder.js';

export type Deleted = { id: string; deletedAt: Date };

export const DeletedRecord = builder.objectRef<Deleted>('DeletedRecord').implement({
  description: 'What a delete* mutation removed, and when',
  fields: (t) => ({
    id: t.exposeID('id'),
    deletedAt: t.expose('deletedAt', { type: 'DateTime' }),
  }),
});

export type Erasure = { contactId: string; erasedAt: Date; submissionsErased: number; dealsUnlinked: number; invoicesUnlinked: number };

export const ErasureReceipt = builder.objectRef<Erasure>('ErasureReceipt').implement({
  description: 'What eraseContact did: the contact is gone, its submissions emptied, its deals and invoices kept unlinked',
  fields: (t) => ({
    contactId: t.exposeID('contactId'),
    erasedAt: t.expose('erasedAt', { type: 'DateTime' }),
    submissionsErased: t.exposeInt('submissionsErased'),
    dealsUnlinked: t.exposeInt('dealsUnlinked'),
    invoicesUnlinked: t.exposeInt('invoicesUnlinked'),
  }),
});
