/**
 * The one refusal every layer throws, domain code included (it names no HTTP type): answered as
 * `status` with the body `{"error": code, ...fields}` (src/http/errors.ts; the attribution
 * endpoints send `{"error": code}` alone).
 */
export class Refusal extends Error {
  constructor(
    readonly status: number,
    /** The answered error code, e.g. not_found, domain_taken, invalid_pixel_key. */
    readonly code: string,
    /** What the body carries beside `error`: `details` of a 422 invalid_request, `param` and `message` of a 400. */
    readonly fields: Record<string, unknown> = {},
  ) {
    super(code);
  }

  get body(): Record<string, unknown> {
    return { error: this.code, ...this.fields };
  }
}

export type RefusalDetail = { path: string; message: string };

export const refuse = (status: number, code: string, fields?: Record<string, unknown>) => new Refusal(status, code, fields);
/** 422 invalid_request naming the fields at fault. */
export const invalidRequest = (details: RefusalDetail[]) => refuse(422, 'invalid_request', { details });
/** A request body that cannot be read at all: 422 invalid_request, `code` naming why. */
export const invalidBody = (message: string, code: string) => refuse(422, 'invalid_request', { details: [{ path: '', message, code }] });
/** 400 invalid_parameter naming the query parameter at fault (docs/api.md). */
export const invalidParameter = (param: string, message: string) => refuse(400, 'invalid_parameter', { param, message });
export const notFound = (code = 'not_found') => refuse(404, code);
export const conflict = (code: string) => refuse(409, code);
export const forbidden = (code = 'forbidden') => refuse(403, code);
export const unauthorized = (code = 'unauthorized') => refuse(401, code);
