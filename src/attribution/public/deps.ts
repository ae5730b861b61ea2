import type { RateLimiter } from '../../http/rate-limit';
import type { Logger } from '../../logger';
import type { ClickRecorder } from '../clicks/record';
import type { InstallRecorder } from '../installs/record';
import type { Ledger } from '../ledger/record';
import type { LinkOpens } from '../links/opens';
import type { PixelKeys } from './pixel-keys';

/** What the public attribution routes use: the recorders of clicks, installs and ledger rows. */
export type PublicDeps = {
  pixelKeys: PixelKeys;
  clicks: ClickRecorder;
  installs: InstallRecorder;
  ledger: Ledger;
  /** Opens an installed app reports (POST /opens), kept for the ledger's credit after an open. */
  opens: LinkOpens;
  rateLimiter: RateLimiter;
  /** Keys the hash of a device's IP. */
  secretKey: string;
  /** TRUST_PROXY: who may name a click's visitor IP (POST /clicks). */
  trustProxy: boolean | string;
  /** PUBLIC_BASE_URL: the server of the OpenAPI document. */
  publicBaseUrl: string;
  log: Logger;
};
