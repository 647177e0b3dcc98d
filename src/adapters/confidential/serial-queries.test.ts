import { describe, expect, it } from 'vitest';
import { coalescingQuery, serialQueue } from './serial-queries.ts';

describe('coalescingQuery', () => {
  it('runs one pass at a time; queries that arrive during a pass share the next one', async () => {
    const passes: string[][] = [];
    let running = 0;
    let overlapped = false;
    const query = coalescingQuery(serialQueue(), async (handles) => {
      running++;
      if (running > 1) overlapped = true;
      passes.push(handles);
      await new Promise((resolve) => setTimeout(resolve, 20));
      running--;
      return handles.map((handle) => `value of ${handle}`);
    });
    const first = query(['0xaa']);
    const during = [query(['0xbb', '0xCC']), query(['0xcc']), query(['0xdd'])];
    expect(await first).toEqual(['value of 0xaa']);
    expect(await Promise.all(during)).toEqual([
      ['value of 0xbb', 'value of 0xcc'],
      ['value of 0xcc'],
      ['value of 0xdd'],
    ]);
    // Two passes in all, the second for the three queued during the first, each handle once.
    expect(passes).toEqual([['0xaa'], ['0xbb', '0xcc', '0xdd']]);
    expect(overlapped).toBe(false);
  });

  it('retries a failed combined pass query by query, so a bad handle fails only its own query', async () => {
    const query = coalescingQuery(serialQueue(), async (handles) => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      if (handles.includes('0xbad')) throw new Error('unknown handle 0xbad');
      return handles.map((handle) => `value of ${handle}`);
    });
    const first = query(['0x01']);
    const good = query(['0x02']);
    const bad = query(['0xbad']);
    await first;
    expect(await good).toEqual(['value of 0x02']);
    await expect(bad).rejects.toThrow('unknown handle 0xbad');
  });
});
