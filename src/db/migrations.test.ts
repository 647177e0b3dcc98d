import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';

interface JournalEntry {
  idx: number;
  when: number;
  tag: string;
}

const journalUrl = new URL('./migrations/meta/_journal.json', import.meta.url);

describe('the migration journal', () => {
  // drizzle's migrator applies, in the journal's order, only the entries whose `when` is later than the last one
  // a database has applied: an entry placed after a later `when` would be skipped on every database already past
  // it (migrations written on parallel branches and numbered before one that landed first must come after it).
  it('has strictly increasing `when` values in its order, one entry per file', async () => {
    const journal = JSON.parse(await readFile(journalUrl, 'utf8')) as { entries: JournalEntry[] };
    const whens = journal.entries.map((entry) => entry.when);
    for (let i = 1; i < whens.length; i++) expect(whens[i]).toBeGreaterThan(whens[i - 1] ?? 0);
    const tags = journal.entries.map((entry) => entry.tag);
    expect(new Set(tags).size).toBe(tags.length);
    for (const entry of journal.entries) {
      expect(entry.tag.startsWith(String(entry.idx).padStart(4, '0'))).toBe(true);
      await expect(
        readFile(new URL(`./migrations/${entry.tag}.sql`, import.meta.url), 'utf8'),
      ).resolves.toBeTruthy();
    }
  });
});
