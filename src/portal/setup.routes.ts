import { z } from 'zod';
import { pixelSnippet, pixelUrl } from '../attribution/pixel/snippet';
import type { Db } from '../db/database';
import { route } from '../http/route';
import { pixelKeyOf } from './setup.queries';
import { answer, readErrors } from './schemas';

const setupAnswer = z.object({
  pixel_key: z.string().describe("The brand's public pixel key (pk_...); no other portal answer holds it"),
  snippet: z.string().describe('HTML to paste into every page of the brand site: loads the web pixel'),
  pixel_url: z.string(),
  sdk_docs_url: z.string().describe('The SDK documentation page (GET /docs/sdk)'),
  sdk_snippet: z.string().describe("React Native: the configure call with the brand's pixel key and this service as endpoint (also sdk_snippets.react_native)"),
  sdk_snippets: z
    .object({
      react_native: z.string().describe('@svc/react-native: configure and trackInstall'),
      swift: z.string().describe('SvcAttribution (Swift): Svc.configure(pixelKey:endpoint:) and trackInstall'),
    })
    .describe("Each SDK package's start-up code with this brand's pixel key and this service as endpoint"),
  install_endpoint: z.string(),
  events_endpoint: z.string(),
});

/** The React Native start-up code for a brand: its pixel key and this deployment as endpoint (docs/sdk.md). */
export function sdkSnippet(base: string, pixelKey: string): string {
  return [
    "import AsyncStorage from '@react-native-async-storage/async-storage';",
    "import { Platform } from 'react-native';",
    "import { configure, trackInstall } from '@svc/react-native';",
    '',
    'configure({',
    `  pixelKey: ${JSON.stringify(pixelKey)},`,
    `  endpoint: ${JSON.stringify(base)},`,
    "  platform: Platform.OS === 'ios' ? 'ios' : 'android',",
    '  storage: AsyncStorage,',
    '});',
    'trackInstall();',
  ].join('\n');
}

/** A Swift string literal of ASCII text (pixel keys and URLs): only `\` and `"` need escaping. */
const swiftString = (text: string) => `"${text.replace(/[\\"]/g, (c) => `\\${c}`)}"`;

/** The Swift package's start-up code for a brand (sdk/ios/README.md): configure once at launch, report the install. */
export function swiftSnippet(base: string, pixelKey: string): string {
  return [
    'import SvcAttribution',
    '',
    '// Once at launch: App.init or application(_:didFinishLaunchingWithOptions:)',
    'Svc.configure(',
    `    pixelKey: ${swiftString(pixelKey)},`,
    `    endpoint: URL(string: ${swiftString(base)})`,
    ')',
    'Task { await Svc.trackInstall() }',
  ].join('\n');
}

/** GET /setup (docs/api.md#endpoints-apiclientattribution): everything a brand needs to send conversions. */
export const setupRoutes = ({ db, publicBaseUrl: base }: { db: Db; publicBaseUrl: string }) => [
  route({
    method: 'GET',
    auth: 'session',
    path: '/setup',
    summary: 'Pixel key, ready-to-paste pixel snippet, SDK docs and the public endpoints',
    responses: { 200: setupAnswer, 401: readErrors[401] },
    async handler(_input, session) {
      const pixelKey = await pixelKeyOf(db, session.brandId);
      return answer(setupAnswer, {
        pixel_key: pixelKey,
        snippet: pixelSnippet(base, pixelKey),
        pixel_url: pixelUrl(base),
        sdk_docs_url: `${base}/docs/sdk`,
        sdk_snippet: sdkSnippet(base, pixelKey),
        sdk_snippets: { react_native: sdkSnippet(base, pixelKey), swift: swiftSnippet(base, pixelKey) },
        install_endpoint: `${base}/api/public/attribution/installs`,
        events_endpoint: `${base}/api/public/attribution/events`,
      });
    },
  }),
];
