import type { Clock } from '../../src/lib/time.ts';

/** A clock tests can move forward: real time plus an offset, so timers and backoffs still run. */
export class ManualClock implements Clock {
  private offset: number;
  constructor(start: Date = new Date()) {
    this.offset = start.getTime() - Date.now();
  }
  now(): Date {
    return new Date(Date.now() + this.offset);
  }
  advance(ms: number): void {
    this.offset += ms;
  }
}
