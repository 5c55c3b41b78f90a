// Query-string building blocks shared by the routes' schemas.
import { z } from 'zod';

/** A whole number written canonically (no sign, no leading zeros, no exponent), within bounds. */
export const canonicalInt = (min: number, max = Number.MAX_SAFE_INTEGER) =>
  z
    .string()
    .regex(/^(0|[1-9][0-9]*)$/, 'must be a whole number')
    .transform(Number)
    .pipe(z.number().int().min(min).max(max));

/** A boolean query flag: true, 1, false or 0. */
export const booleanFlag = z
  .enum(['true', '1', 'false', '0'], { message: 'true, 1, false or 0' })
  .transform((value) => value === 'true' || value === '1');
