import { Type } from '@sinclair/typebox';
import { Nullable, Timestamp } from '../../http/envelope.ts';

export const MailboxMessage = Type.Object(
  {
    id: Type.String(),
    from: Type.String(),
    to: Type.String(),
    subject: Type.String(),
    text: Type.String(),
    html: Nullable(Type.String()),
    receivedAt: Timestamp,
  },
  { $id: 'MailboxMessage', title: 'MailboxMessage' },
);

export const MailboxQuery = Type.Object({
  to: Type.Optional(
    Type.String({ minLength: 1, maxLength: 254, description: 'Only messages to this address' }),
  ),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
});
