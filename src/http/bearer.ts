/** The credential of an `Authorization: Bearer <credential>` header value (scheme in any case), trimmed. */
export function bearerToken(authorization: string | undefined): string | undefined {
  const m = /^Bearer\s+(.+)$/i.exec(authorization ?? '');
  return m?.[1]?.trim() || undefined;
}
