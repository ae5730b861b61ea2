import { z } from 'zod';

/**
 * Integer query parameters (limit, page, ...) are decimal digits only (docs/api.md): `0x10`, `1e2`,
 * `+5`, ` 5` and `5.0` are refused rather than read as JavaScript's Number() would read them.
 */
export function integerParam<S extends z.ZodType>(schema: S) {
  return z.preprocess((value, ctx) => {
    if (typeof value === 'string' && !/^[0-9]+$/.test(value)) {
      ctx.addIssue({ code: 'custom', message: 'must be a whole number in decimal digits (0-9 only)', params: { decimalDigits: true } });
      return z.NEVER;
    }
    return value;
  }, schema);
}

/** Whether a query issue is integerParam's: every API answers it 400 invalid_parameter. */
export const notDecimalDigits = (issue: z.core.$ZodIssue): boolean =>
  issue.code === 'custom' && (issue.params as { decimalDigits?: unknown } | undefined)?.decimalDigits === true;
