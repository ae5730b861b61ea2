import { createHmac, randomBytes } from 'node:crypto';

/** Standard Webhooks 1.0 (docs/webhooks.md, "Verifying a signature"). */

/** `whsec_` + base64 of 32 random bytes. */
export const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

/** What the portal shows of a secret once it is stored: its first 10 characters. */
export const secretHint = (secret: string) => secret.slice(0, 10);

/** `v1,<base64 HMAC-SHA256 of id.timestamp.body>` with the secret's decoded key. */
export function signature(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/** The `webhook-signature` header: one signature per secret, space-separated, the newest first. */
export const signatureHeader = (secrets: string[], id: string, timestamp: number, body: string) =>
  secrets.map((s) => signature(s, id, timestamp, body)).join(' ');
