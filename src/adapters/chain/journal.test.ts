import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Journal, readJournal } from './journal.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'sealpay-journal-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('chain journal', () => {
  it('appends entries durably and reads them back', async () => {
    const file = path.join(dir, 'a.jsonl');
    expect(readJournal(file)).toEqual({ entries: [], droppedBytes: 0 });
    const journal = await Journal.open(file, 0);
    await journal.append({ k: 'mine', ts: 10 });
    await journal.append({ k: 'input', handles: ['0x01'], values: ['0x05'] });
    expect(journal.count).toBe(2);
    await journal.close();
    expect(readJournal(file).entries).toEqual([
      { k: 'mine', ts: 10 },
      { k: 'input', handles: ['0x01'], values: ['0x05'] },
    ]);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it('drops and cuts a torn last line', () => {
    const file = path.join(dir, 'b.jsonl');
    const good = `${JSON.stringify({ k: 'mine', ts: 1 })}\n${JSON.stringify({ k: 'clock', offset: 5 })}\n`;
    writeFileSync(file, `${good}{"k":"tx","m":"eth_sendRaw`);
    const result = readJournal(file);
    expect(result.entries).toHaveLength(2);
    expect(result.droppedBytes).toBe(Buffer.byteLength('{"k":"tx","m":"eth_sendRaw'));
    expect(readFileSync(file, 'utf8')).toBe(good);
    // A complete line that lost only its newline is torn too (its write never finished).
    writeFileSync(file, `${good}{"k":"mine","ts":3}`);
    expect(readJournal(file).entries).toHaveLength(2);
  });

  it('refuses a journal damaged before its last line', () => {
    const file = path.join(dir, 'c.jsonl');
    writeFileSync(file, `{"k":"mine","ts":1}\ngarbage\n{"k":"mine","ts":2}\n`);
    expect(() => readJournal(file)).toThrow(/damaged/);
  });
});
