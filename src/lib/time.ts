/** The service's clock, injectable so tests can move time (expiry, TOTP windows, rate-limit windows). */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

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

/** ISO 8601 UTC with milliseconds, as every timestamp of the interface. */
export function iso(date: Date): string;
export function iso(date: Date | null | undefined): string | null;
export function iso(date: Date | null | undefined): string | null {
  return date ? date.toISOString() : null;
}
