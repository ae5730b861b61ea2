import type { z } from 'zod';
import type { Config } from '../../../config';
import type { Provider } from '../../ledger/types';
import { APPLE_ROOT_CA_G3 } from '../apple-root';
import type { Connector } from '../connector';
import { adapty, adaptySettings } from './adapty';
import { appleConnector, appleSettings } from './apple';
import { revenuecat, revenuecatSettings } from './revenuecat';
import { shopify, shopifySettings } from './shopify';
import { stripe, stripeSettings } from './stripe';

/** The five connectors, one per provider (docs/webhooks.md). */
export function createConnectors(config: Pick<Config, 'testAppleRootCa'>): Record<Provider, Connector> {
  const appleRoots = [config.testAppleRootCa ?? APPLE_ROOT_CA_G3];
  return { revenuecat, adapty, stripe, shopify, apple: appleConnector(appleRoots) };
}

/** Each provider's connection settings, as the portal validates them. */
export const SETTINGS_SCHEMAS: Record<Provider, z.ZodType<Record<string, unknown>>> = {
  revenuecat: revenuecatSettings,
  adapty: adaptySettings,
  stripe: stripeSettings,
  shopify: shopifySettings,
  apple: appleSettings,
};
