import { appendFileSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { JOURNAL_START, Journal, journalHolds, readJournal } from './journal.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'sealpay-journal-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('chain journal', () => {
  it('appends entries durably and reads them back', async () => {
    const file = path.join(dir, 'a.jsonl');
    expect(readJournal(file)).toEqual({ entries: [], droppedBytes: 0, end: JOURNAL_START });
    const journal = await Journal.open(file, JOURNAL_START);
    await journal.append({ k: 'mine', ts: 10 });
    await journal.append({ k: 'input', handles: ['0x01'], values: ['0x05'] });
    expect(journal.count).toBe(2);
    await journal.close();
    const read = readJournal(file);
    expect(read.entries).toEqual([
      { k: 'mine', ts: 10 },
      { k: 'input', handles: ['0x01'], values: ['0x05'] },
    ]);
    // Where reading ended is where appending left the journal.
    expect(read.end).toEqual(journal.position);
    expect(read.end.bytes).toBe(statSync(file).size);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it('reads only the entries after a position it still holds, and tells a position it no longer holds', async () => {
    const file = path.join(dir, 'd.jsonl');
    const journal = await Journal.open(file, JOURNAL_START);
    for (let ts = 1; ts <= 3; ts++) await journal.append({ k: 'mine', ts });
    const middle = journal.position;
    await journal.append({ k: 'clock', offset: 7 });
    await journal.close();
    expect(journalHolds(file, JOURNAL_START)).toBe(true);
    expect(journalHolds(file, middle)).toBe(true);
    const tail = readJournal(file, middle);
    expect(tail.entries).toEqual([{ k: 'clock', offset: 7 }]);
    expect(tail.end).toEqual(journal.position);
    expect(readJournal(file, journal.position).entries).toEqual([]);

    // Another journal of the same length, or a shorter one, does not hold the position.
    const other = path.join(dir, 'e.jsonl');
    writeFileSync(other, readFileSync(file, 'utf8').replace('"ts":3', '"ts":4'));
    expect(journalHolds(other, middle)).toBe(false);
    writeFileSync(other, `${JSON.stringify({ k: 'mine', ts: 1 })}\n`);
    expect(journalHolds(other, middle)).toBe(false);
    expect(journalHolds(path.join(dir, 'missing.jsonl'), middle)).toBe(false);
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
    // Also when reading from a position.
    const first = readJournal(file, JOURNAL_START).end;
    appendFileSync(file, '{"k":"mi');
    const after = readJournal(file, first);
    expect(after.entries).toEqual([]);
    expect(after.droppedBytes).toBe(8);
    expect(readFileSync(file, 'utf8')).toBe(good);
  });

  it('refuses a journal damaged before its last line', () => {
    const file = path.join(dir, 'c.jsonl');
    writeFileSync(file, `{"k":"mine","ts":1}\ngarbage\n{"k":"mine","ts":2}\n`);
    expect(() => readJournal(file)).toThrow(/damaged/);
  });
});
