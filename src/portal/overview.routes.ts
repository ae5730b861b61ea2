import { z } from 'zod';
import { PERIODS } from '../http/query';
import { route } from '../http/route';
import type { WebhookServices } from '../attribution/outbound-webhooks/service';
import { sendJsonText } from '../reads/pipeline';
import type { PortalReads } from './list';
import { overview } from './overview.queries';
import { portalRange, rangeParams } from './range';
import { answer, dateRange, money, readErrors } from './schemas';

const counts = {
  clicks: z.number().int(),
  installs: z.number().int(),
  conversions: z.number().int().describe('Live ledger rows that are not refunds'),
  revenue: money.describe('Live rows per currency, refunds counting negative'),
};
const day = z.object({ date: z.iso.date(), ...counts });
const totals = z.object({
  ...dateRange,
  ...counts,
  bot_clicks: z.number().int().describe('Clicks by crawlers, link previews and prefetches: stored, never in clicks'),
  installs_by_method: z
    .partialRecord(z.enum(['click', 'clipboard', 'ip', 'code', 'unattributed']), z.number().int())
    .describe('installs by how each was credited (its resolution_method); methods without installs are absent, so the values add up to installs'),
  refunds: money.describe('Refunded amounts per currency, positive'),
  daily: z
    .array(day)
    .describe('One item per day of the range, oldest first, zero on days without facts; revenue per currency by the same rule as the total'),
});
const overviewAnswer = totals.extend({
  period: z.enum(PERIODS),
  previous: totals.describe('The same numbers for the range of equal length just before'),
});
const webhookAlerts = z
  .array(z.object({ endpoint_id: z.string(), url: z.string(), status: z.enum(['failing', 'disabled']), since: z.iso.datetime() }))
  .describe('Webhook endpoints failing, or disabled other than by the brand (docs/webhooks.md)');

/** GET /overview (docs/api.md#endpoints-apiclientattribution). */
export const overviewRoutes = ({ warehouse, reads, webhooks }: PortalReads & { webhooks: WebhookServices }) => [
  route({
    method: 'GET',
    auth: 'session',
    path: '/overview',
    summary: 'Headline attribution numbers for a date range and the range before it',
    query: rangeParams,
    responses: { 200: overviewAnswer.extend({ webhook_alerts: webhookAlerts }), ...readErrors },
    async handler({ query, req, reply }, session) {
      const brandId = session.brandId;
      // The numbers are kept until attribution facts land; the webhook alerts, a record read, are read each time.
      const [text, alerts] = await Promise.all([
        reads.answer({
          brandId,
          reads: 'attribution',
          path: req.routeOptions.url ?? '/overview',
          query,
          scope: () => portalRange(warehouse, brandId, query),
          answer: async (range) => JSON.stringify(answer(overviewAnswer, { ...(await overview(warehouse, brandId, range)), period: range.period })),
        }),
        webhooks.endpoints.alerts(brandId),
      ]);
      return sendJsonText(reply, `${text.slice(0, -1)},"webhook_alerts":${JSON.stringify(alerts)}}`);
    },
  }),
];
