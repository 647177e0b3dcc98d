import { Type } from '@sinclair/typebox';
import { Timestamp } from '../../http/envelope.ts';
import { MAX_ADVANCE_SECONDS } from './clock.service.ts';

/** `POST /sandbox/clock`: how far to move the test clock forward. */
export const AdvanceClockBody = Type.Object(
  {
    advanceSeconds: Type.Integer({
      minimum: 1,
      maximum: MAX_ADVANCE_SECONDS,
      description: 'Seconds to move the clock forward: 1 to 400 days’ worth (34,560,000) per call.',
    }),
  },
  { additionalProperties: false },
);

/** The test clock as the service reads it. */
export const TestClock = Type.Object(
  {
    now: Timestamp,
    offsetSeconds: Type.Integer({
      description: 'How far the clock runs ahead of real time; it never decreases.',
    }),
  },
  { title: 'TestClock' },
);
