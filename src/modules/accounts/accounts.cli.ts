import { randomBytes } from 'node:crypto';
import type { Deps } from '../../deps.ts';
import { findUserByEmail, insertUser, nextTokenVersion } from './accounts.repository.ts';
import { changeUser } from './accounts.service.ts';
import { assertPasswordPolicy, hashPassword } from './password.ts';

/** A temporary password that always meets the policy: upper, lower, digit, 20 characters. */
export function temporaryPassword(): string {
  const body = randomBytes(15).toString('base64url').replace(/[-_]/g, 'x');
  return `Tmp${body}9a`;
}

/** Operator commands on accounts; returns the text to print. */
export async function runAccountsCommand(
  deps: Deps,
  action: string,
  options: { email?: string; name?: string; company?: string },
): Promise<string> {
  const { db } = deps.database;
  const email = options.email?.trim();
  if (!email) throw new Error('--email is required');
  const now = deps.clock.now();
  switch (action) {
    case 'create': {
      if (await findUserByEmail(db, email)) throw new Error(`an account with email ${email} exists`);
      const password = temporaryPassword();
      assertPasswordPolicy(password);
      const user = await insertUser(
        db,
        {
          email,
          passwordHash: await hashPassword(password),
          name: options.name ?? null,
          company: options.company ?? null,
          mustChangePassword: true,
        },
        now,
      );
      return `created account ${user.id} <${user.email}>\ntemporary password (shown once; must be changed): ${password}`;
    }
    case 'disable':
    case 'enable': {
      const user = await findUserByEmail(db, email);
      if (!user) throw new Error(`no account with email ${email}`);
      // Disabling ends every session (the token version moves on): enabling again brings back API keys, by
      // design, but no session minted before the disable.
      await changeUser(
        deps,
        user.id,
        action === 'disable'
          ? { disabledAt: now, tokenVersion: nextTokenVersion(), updatedAt: now }
          : { disabledAt: null, updatedAt: now },
      );
      return `account ${user.id} <${user.email}> ${action}d`;
    }
    default:
      throw new Error('usage: sealpay accounts create|disable|enable --email E');
  }
}
