/** How fast the agent calls the service host: one pace for the intake and the return path. */
import { z } from 'zod';
import { countOrAuto, rateOrOff } from './schema-types.js';

export const paceSchema = z
  .strictObject({
    concurrency: countOrAuto(1, 256).describe(
      'Calls to the service in flight at the same time, the intake and the return path together. auto: as many as the service takes, from 4 up to 32, one more per round of good answers; a number: at most that many. Either way it halves when the service answers 429 or 503, and no call to the service starts before the time a Retry-After names.',
    ),
    rate: rateOrOff().describe(
      'Calls started per second, minute or hour, all callers together: 600/min, 10/s, 5000/h; off: only the service paces the agent (concurrency above). A folder may set a rate of its own (folders[].rate).',
    ),
  })
  .prefault({})
  .describe(
    'The pace of every call to the service host (sandbox or service): the intake and the return path wait in one line, so a 429 to either slows both.',
  );
