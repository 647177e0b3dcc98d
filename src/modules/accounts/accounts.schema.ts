import { Type } from '@sinclair/typebox';
import type { UserRow } from '../../db/schema/index.ts';
import { Nullable, NullableTimestamp, Timestamp } from '../../http/envelope.ts';
import { iso } from '../../lib/time.ts';

export const User = Type.Object(
  {
    id: Type.String(),
    email: Type.String(),
    name: Nullable(Type.String()),
    company: Nullable(Type.String()),
    mustChangePassword: Type.Boolean(),
    totpEnabled: Type.Boolean(),
    recoveryCodesRemaining: Type.Integer({
      minimum: 0,
      description: 'Unused TOTP recovery codes (0 while two-factor is off)',
    }),
    lastLoginAt: NullableTimestamp,
    createdAt: Timestamp,
  },
  { $id: 'User', title: 'User' },
);

export function toUser(row: UserRow) {
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    company: row.company,
    mustChangePassword: row.mustChangePassword,
    totpEnabled: row.totpEnabled,
    recoveryCodesRemaining: row.recoveryCodeHashes.length,
    lastLoginAt: iso(row.lastLoginAt),
    createdAt: iso(row.createdAt),
  };
}

export const Principal = Type.Object({
  kind: Type.Union([Type.Literal('session'), Type.Literal('api_key')]),
  id: Type.String(),
  expiresAt: NullableTimestamp,
});

const Email = Type.String({ format: 'email', minLength: 3, maxLength: 254 });
// Length and character rules are the password policy's (400 weak_password), not the schema's.
const Password = Type.String({ maxLength: 1000 });
const Name = Type.String({ minLength: 1, maxLength: 200 });

export const SignupBody = Type.Object({
  email: Email,
  password: Password,
  name: Type.Optional(Name),
  company: Type.Optional(Type.String({ maxLength: 200 })),
});

export const LoginBody = Type.Object({
  email: Type.String({ minLength: 1, maxLength: 254 }),
  password: Type.String({ minLength: 1, maxLength: 1000 }),
});

export const PatchMeBody = Type.Object(
  {
    name: Type.Optional(Name),
    company: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { minProperties: 1 },
);

export const ChangePasswordBody = Type.Object({
  currentPassword: Type.String({ minLength: 1, maxLength: 1000 }),
  newPassword: Password,
});
