import { type Detail, refusalInWords } from './refusals';

/**
 * The portal API, as this page calls it: same-origin fetches (so the browser sends the
 * session cookie and, on writes, this origin as `Origin`), errors turned into sentences.
 */
export type Money = Record<string, number>;
export type CreatorRef = { id: string; name: string };
export type Pagination = { next_cursor: string | null; has_more: boolean };
export type Page<T> = { data: T[]; pagination: Pagination; start_date: string; end_date: string };

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** Someone listens (main.ts) and shows the login form when the session has ended. */
export const UNAUTHORIZED_EVENT = 'portal:unauthorized';

export async function api<T>(method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, body?: unknown): Promise<T> {
  let res: Response;
  try {
    res = await fetch(`/api/client${path}`, {
      method,
      credentials: 'same-origin',
      headers: body === undefined ? { accept: 'application/json' } : { accept: 'application/json', 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError(0, 'network', 'The service could not be reached. Check your connection and try again.');
  }
  if (res.status === 204) return undefined as T;
  const json = (await res.json().catch(() => null)) as Record<string, unknown> | null;
  if (res.ok && json) return json as T;
  const code = typeof json?.error === 'string' ? json.error : 'unknown';
  const error = new ApiError(res.status, code, explain(res, code, json));
  if (res.status === 401 && !path.startsWith('/auth/login')) window.dispatchEvent(new CustomEvent(UNAUTHORIZED_EVENT));
  throw error;
}

/** The sentence a person reads for an error answer. */
function explain(res: Response, code: string, body: Record<string, unknown> | null): string {
  switch (code) {
    case 'unauthorized':
      return 'Your session has ended. Log in again.';
    case 'invalid_credentials':
      return 'That email and password do not match an account.';
    case 'rate_limited': {
      const seconds = Number(res.headers.get('retry-after'));
      const minutes = Number.isFinite(seconds) && seconds > 0 ? Math.ceil(seconds / 60) : 15;
      return `Too many failed attempts. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`;
    }
    case 'forbidden_origin':
      return 'The service refused a change sent from another site. Reload this page and try again.';
    case 'invalid_parameter':
      return `The ${String(body?.param ?? 'request').replace('_', ' ')} is not valid: ${String(body?.message ?? '')}`;
    case 'invalid_request':
      return refusalInWords(Array.isArray(body?.details) ? (body.details as Detail[]) : []);
    case 'domain_taken':
      return 'That domain is already registered. Choose another host name.';
    case 'invalid_domain':
      return "That host name cannot be added: use a domain of your own, such as go.yourbrand.com (not an IP address, a localhost name or this service's own address).";
    case 'domain_has_links':
      return 'Links still use this domain, so it cannot be removed. Ask your svc contact to move them first.';
    case 'already_connected':
      return 'This provider is already connected. Change its signing secret on its card instead.';
    case 'forbidden':
      return 'Shared domains are managed by svc and cannot be changed here.';
    case 'not_found':
      return 'This no longer exists. Reload the page to see the current list.';
    default:
      return res.status >= 500
        ? 'The service had a problem answering. Try again in a moment.'
        : `The request was refused (${res.status} ${code}).`;
  }
}
