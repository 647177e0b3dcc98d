import { hash, verify } from '@node-rs/argon2';
import { AppError } from '../../lib/errors.ts';

// argon2id with OWASP's second configuration (19 MiB, 2 passes): memory-hard, ~20 ms here.
// algorithm 2 is Argon2id (the package's const enum cannot be imported under verbatimModuleSyntax).
const OPTIONS = { algorithm: 2, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

/** A hash of a password nobody has, verified when the email is unknown so both paths take the same time. */
let decoyHash: Promise<string> | undefined;

export function assertPasswordPolicy(password: string): void {
  const problems: string[] = [];
  if (password.length < 10 || password.length > 200) problems.push('be 10 to 200 characters long');
  if (!/[A-Z]/.test(password)) problems.push('contain an uppercase letter');
  if (!/[a-z]/.test(password)) problems.push('contain a lowercase letter');
  if (!/[0-9]/.test(password)) problems.push('contain a digit');
  if (problems.length > 0) {
    throw new AppError('weak_password', `The password must ${problems.join(', ')}.`);
  }
}

export function hashPassword(password: string): Promise<string> {
  return hash(password, OPTIONS);
}

export async function verifyPassword(passwordHash: string | null, password: string): Promise<boolean> {
  if (passwordHash === null) {
    decoyHash ??= hashPassword('decoy-password-never-used-A1');
    await verify(await decoyHash, password).catch(() => false);
    return false;
  }
  return verify(passwordHash, password).catch(() => false);
}
