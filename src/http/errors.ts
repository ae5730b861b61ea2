import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { type core, config, ZodError } from 'zod';
import { invalidBody, Refusal, refuse } from '../refusal';
import { RepeatedLog } from '../repeated-log';

/** Zod v4's structured issue fields a 422 passes on, so clients need not parse the English message. */
const ISSUE_FIELDS = ['expected', 'origin', 'minimum', 'maximum', 'inclusive', 'exact', 'values', 'keys', 'format', 'divisor'] as const;

/**
 * Zod issues as answered in `details` of a 422 (docs/api.md#internal-set-up-endpoints): path, message and code, the issue's
 * own fields of ISSUE_FIELDS it has, and on invalid_type `missing` (whether no value was sent).
 */
export function zodDetails(err: ZodError) {
  return err.issues.map((i) => {
    const detail: Record<string, unknown> = { path: i.path.join('.'), message: i.message, code: i.code };
    const fields: Record<string, unknown> = { ...i };
    for (const key of ISSUE_FIELDS) if (fields[key] !== undefined) detail[key] = jsonValue(fields[key]);
    if (i.code === 'invalid_type') detail.missing = absent(i);
    return detail;
  });
}

// JSON has no bigint (z.bigint() limits and literals): a number when exact, else its digits.
const jsonValue = (v: unknown): unknown =>
  Array.isArray(v) ? v.map(jsonValue) : typeof v === 'bigint' ? (Number.isSafeInteger(Number(v)) ? Number(v) : String(v)) : v;

/**
 * Whether an invalid_type issue is about an absent value. Zod v4 drops the input from its issues,
 * so ask zod's own error map what it says of undefined; if it says the same of null, it cannot tell.
 */
function absent(i: core.$ZodIssueInvalidType): boolean {
  const { customError, localeError } = config();
  const said = (input: unknown) => {
    const issue = { ...i, input } as core.$ZodRawIssue;
    const m = customError?.(issue) ?? localeError?.(issue);
    return typeof m === 'string' ? m : m?.message;
  };
  return said(undefined) === i.message && said(null) !== i.message;
}

/**
 * What every error is answered with: a Refusal its own status and body; zod failures and bodies Fastify
 * refuses 422 invalid_request; Fastify's other client errors keep their status;
 * the rest is a logged 500.
 */
function errorAnswer(err: FastifyError | Error, req: FastifyRequest): Refusal {
  if (err instanceof Refusal) return err;
  if (err instanceof ZodError) return refuse(422, 'invalid_request', { details: zodDetails(err) });
  const fe = err as FastifyError;
  if (fe.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return refuse(413, 'payload_too_large');
  if (fe.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return refuse(415, 'unsupported_media_type');
  if (fe.statusCode === 400) {
    const notJson = fe.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || fe.code === 'FST_ERR_CTP_EMPTY_JSON_BODY';
    return notJson ? invalidBody('the body is not valid JSON', 'invalid_json') : invalidBody(fe.message, 'bad_request');
  }
  if (fe.statusCode && fe.statusCode > 400 && fe.statusCode < 500) return refuse(fe.statusCode, 'bad_request', { message: fe.message });
  if (storeUnavailable(err)) {
    unavailableLog ??= new RepeatedLog(req.server.log, 'warn', 'a store is down or hung: answered 503 unavailable', { countField: 'requests' });
    unavailableLog.report({ err: err.message, route: req.routeOptions.url });
    return refuse(503, 'unavailable');
  }
  req.log.error({ err }, 'unhandled error');
  return refuse(500, 'internal_error');
}

let unavailableLog: RepeatedLog | undefined;

// Postgres refusing or unable to serve: no database, shutting down, starting, full, cancelled by statement_timeout.
const PG_UNAVAILABLE = new Set(['3D000', '57P01', '57P02', '57P03', '53300', '57014']);
const NET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE']);
// What pg and ioredis throw when a store is gone or hung (their own messages, no codes).
const UNAVAILABLE_MESSAGES =
  /^(Redis unavailable|Connection terminated|timeout exceeded when trying to connect|Query read timeout|Client has encountered a connection error|Command timed out|Stream isn't writeable|Connection is closed|Socket timeout|Reached the max retries per request limit)|is not currently accepting connections/;

/** Whether `err` says Postgres or Redis cannot be reached or did not answer in time (503, never 500). */
export function storeUnavailable(err: unknown, depth = 0): boolean {
  if (!(err instanceof Error) || depth > 3) return false;
  const { code } = err as { code?: unknown };
  if (typeof code === 'string' && (PG_UNAVAILABLE.has(code) || code.startsWith('08') || NET_CODES.has(code))) return true;
  if (err.name === 'MaxRetriesPerRequestError' || UNAVAILABLE_MESSAGES.test(err.message)) return true;
  const nested = [err.cause, ...((err as { errors?: unknown[] }).errors ?? [])];
  return nested.some((e) => storeUnavailable(e, depth + 1));
}

/** The app's error handler. */
export function errorHandler(err: FastifyError | Error, req: FastifyRequest, reply: FastifyReply) {
  const { status, body } = errorAnswer(err, req);
  return reply.status(status).send(body);
}

/** The error handler of the attribution endpoints (public and webhooks): their error bodies are {"error":"<code>"}, nothing more (docs/api.md#error-codes). */
export function attributionErrorHandler(err: FastifyError | Error, req: FastifyRequest, reply: FastifyReply) {
  const { status, body } = errorAnswer(err, req);
  return reply.status(status).send({ error: body.error });
}
