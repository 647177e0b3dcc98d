import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { constantTimeEqual, createKeyring, loadKeyring } from './secrets.ts';

describe('keyring', () => {
  it('seals and opens with the context bound', () => {
    const keyring = createKeyring(randomBytes(32));
    const sealed = keyring.seal('0xsecret', 'wallet:1');
    expect(sealed).not.toContain('secret');
    expect(keyring.openText(sealed, 'wallet:1')).toBe('0xsecret');
    expect(() => keyring.open(sealed, 'wallet:2')).toThrow();
  });

  it('opens values sealed under a previous key after rotation', () => {
    const oldKey = randomBytes(32);
    const sealed = createKeyring(oldKey).seal('kept', 'ctx');
    const rotated = createKeyring(randomBytes(32), [oldKey]);
    expect(rotated.openText(sealed, 'ctx')).toBe('kept');
    expect(rotated.seal('new', 'ctx').split('.')[1]).toBe(rotated.currentId);
    expect(() => createKeyring(randomBytes(32)).open(sealed, 'ctx')).toThrow();
  });

  it('creates the embedded master key file with mode 0600 and reuses it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sealpay-keyring-'));
    const first = loadKeyring({ masterKey: null, dataDir: dir });
    const second = loadKeyring({ masterKey: null, dataDir: dir });
    expect(second.openText(first.seal('x', 'c'), 'c')).toBe('x');
    expect(statSync(join(dir, 'master.key')).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(dir, 'master.key'), 'utf8').trim()).toMatch(/^[0-9a-f]{64}$/);
  });

  it('compares in constant time and by value', () => {
    expect(constantTimeEqual('abc', 'abc')).toBe(true);
    expect(constantTimeEqual('abc', 'abd')).toBe(false);
    expect(constantTimeEqual('abc', 'abcd')).toBe(false);
  });
});
