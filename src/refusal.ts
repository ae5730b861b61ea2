/**
 * A refusal in domain terms, thrown by capability code that knows nothing of HTTP; the
 * route layer answers each kind with its status (src/http/route.ts).
 */
export type RefusalKind = 'invalid' | 'not_found' | 'forbidden' | 'conflict';

export type RefusalDetail = { path: string; message: string };

export class Refusal extends Error {
  constructor(
    readonly kind: RefusalKind,
    /** The answered error code, e.g. domain_taken; `invalid` always answers invalid_request. */
    readonly code: string,
    readonly details: RefusalDetail[] = [],
  ) {
    super(code);
  }
}

/** 422 invalid_request naming the fields at fault. */
export const invalidRequest = (details: RefusalDetail[]) => new Refusal('invalid', 'invalid_request', details);
export const notFound = () => new Refusal('not_found', 'not_found');
export const conflict = (code: string) => new Refusal('conflict', code);
export const forbidden = (code = 'forbidden') => new Refusal('forbidden', code);
