import { ApiError, api, type Pagination } from '../api';
import { announce, append, type Child, h, uid } from '../dom';
import { formatMoment } from '../format';
import type { PortalPage } from '../page';
import { copyButton, emptyState, field, loading, readInto, submitting } from '../ui';

type Endpoint = {
  id: string;
  url: string;
  description: string | null;
  event_types: string[];
  attributed_only: boolean;
  include_sandbox: boolean;
  enabled: boolean;
  status: 'active' | 'failing' | 'disabled';
  failing_since: string | null;
  disabled_at: string | null;
  disabled_reason: 'user' | 'failing' | 'gone' | 'operator' | null;
  secret_hint: string;
  previous_secret_expires_at: string | null;
  last_attempt_at: string | null;
  last_success_at: string | null;
  created_at: string;
  secret?: string;
};
type EventTypeInfo = { type: string; description: string };
type Delivery = {
  id: string;
  event_id: string;
  event_type: string;
  status: 'pending' | 'succeeded' | 'failed';
  attempt_count: number;
  next_attempt_at: string | null;
  last_attempt_at: string | null;
  response_status: number | null;
  error: string | null;
  test: boolean;
  created_at: string;
};
type Attempt = { attempt: number; at: string; response_status: number | null; duration_ms: number; error: string | null; response_excerpt: string | null };

/** One line of Node that verifies a delivery with the Standard Webhooks package. */
const VERIFY_EXAMPLE = "new (require('standardwebhooks').Webhook)(process.env.WEBHOOK_SECRET).verify(rawBody, req.headers) // throws if forged";

const WORDS: Record<string, string> = {
  webhook_url_taken: 'This brand already has an endpoint with that URL.',
  endpoint_limit_reached: 'This brand has as many endpoints as it may have. Remove one first (disabled ones count too).',
  endpoint_disabled: 'svc disabled this endpoint. Ask your svc contact to enable it again.',
  delivery_pending: 'This delivery is still being sent; it can be sent again once it has succeeded or failed.',
};
const URL_REASONS: Record<string, string> = {
  scheme: 'The URL must start with https://.',
  too_long: 'The URL is longer than 2,048 characters.',
  userinfo: 'The URL may not hold a user name or password.',
  fragment: 'The URL may not end in a #fragment.',
  service_origin: 'The URL may not point at this service.',
  localhost: 'The URL may not point at localhost.',
  single_label: 'The URL needs a full host name, such as hooks.yourbrand.com.',
  blocked_address: 'The host name leads to a private or reserved address, which webhooks never reach.',
  unresolvable: 'The host name does not resolve. Check it, or create its DNS record first.',
};

/** A portal call whose refusals read as sentences about webhooks. */
async function call<T>(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown): Promise<T> {
  try {
    return await api<T>(method, `/attribution${path}`, body);
  } catch (err) {
    if (err instanceof ApiError && WORDS[err.code]) throw new Error(WORDS[err.code]);
    if (err instanceof ApiError && err.code === 'invalid_url') throw new Error('That URL cannot receive webhooks.');
    throw err;
  }
}

/** The reason a URL was refused: api() keeps only the code, so ask once more to read it. */
async function createEndpoint(body: Record<string, unknown>): Promise<Endpoint> {
  const res = await fetch('/api/client/attribution/webhooks', {
    method: 'POST',
    credentials: 'same-origin',
    headers: { accept: 'application/json', 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (res.status === 422) {
    const json = (await res.json().catch(() => null)) as { error?: string; reason?: string } | null;
    if (json?.error === 'invalid_url') throw new Error(URL_REASONS[json.reason ?? ''] ?? 'That URL cannot receive webhooks.');
  }
  if (res.status === 201) return (await res.json()) as Endpoint;
  // Any other answer reads as every other call's does.
  return call<Endpoint>('POST', '/webhooks', body);
}

const when = (iso: string | null) => (iso ? formatMoment(iso) : 'never');

function statusBadge(e: Endpoint): HTMLElement {
  if (e.status === 'active') return h('span', { class: 'badge ok' }, 'Active');
  if (e.status === 'failing') return h('span', { class: 'badge warn' }, `Failing since ${formatMoment(e.failing_since!)}`);
  const why = { user: 'by you', failing: 'after failing for days', gone: 'it answered 410 Gone', operator: 'by svc' }[e.disabled_reason ?? 'user'];
  return h('span', { class: 'badge bad' }, `Disabled (${why})`);
}

/** Webhooks: the brand's endpoints, their secrets, test events and the delivery log. */
export const webhooksPage: PortalPage = {
  path: 'webhooks',
  title: 'Webhooks',
  ranged: false,
  async render(view) {
    const banner = h('div');
    const secretBox = h('div');
    const list = h('div', { 'aria-busy': 'true' }, loading('webhook endpoints'));
    const url = h('input', { type: 'url', name: 'url', required: true, placeholder: 'https://hooks.yourbrand.com/svc', autocomplete: 'off', spellcheck: 'false' });
    const description = h('input', { type: 'text', name: 'description', maxlength: 200, autocomplete: 'off' });
    const types = h('fieldset', { class: 'event-types' }, h('legend', null, 'Events'));
    const attributedOnly = h('input', { type: 'checkbox', name: 'attributed_only', checked: true });
    const sandbox = h('input', { type: 'checkbox', name: 'include_sandbox' });
    const form = h(
      'form',
      { class: 'card add-webhook', 'aria-labelledby': 'add-webhook-title' },
      h('h2', { id: 'add-webhook-title' }, 'Add an endpoint'),
      field('URL', url, 'Your server’s https address. svc POSTs each event there as signed JSON.'),
      field('Description (optional)', description),
      types,
      checkField('Only attributed sales and leads', attributedOnly),
      checkField('Include sandbox (test store) events', sandbox),
      h('button', { type: 'submit', class: 'primary' }, 'Add endpoint'),
    );
    view.append(
      h('h1', { tabindex: -1 }, 'Webhooks'),
      h('p', { class: 'lead' }, 'Your own systems hear of every attributed install, sale, refund and lead, signed so they can tell it came from svc.'),
      banner,
      secretBox,
      list,
      form,
    );
    let eventTypes: EventTypeInfo[] = [];

    form.addEventListener('submit', (event) => {
      event.preventDefault();
      void submitting(form, async () => {
        const chosen = [...types.querySelectorAll<HTMLInputElement>('input:checked')].map((i) => i.value);
        const created = await createEndpoint({
          url: url.value.trim(),
          description: description.value.trim() || null,
          ...(chosen.length ? { event_types: chosen } : {}),
          attributed_only: attributedOnly.checked,
          include_sandbox: sandbox.checked,
        });
        url.value = '';
        description.value = '';
        showSecret(secretBox, created, 'created');
        announce(`Endpoint added. Copy its signing secret now: it is shown only once.`);
        await show();
        secretBox.querySelector<HTMLElement>('h2')?.focus();
      });
    });

    const show = async () => {
      const answer = await readInto(list, () => call<{ data: Endpoint[]; event_types: EventTypeInfo[] }>('GET', '/webhooks'));
      if (!answer) return;
      if (eventTypes.length === 0) {
        eventTypes = answer.event_types;
        append(types, eventTypes.map((t) => checkField([h('code', null, t.type), ` ${t.description}`], h('input', { type: 'checkbox', name: 'event_types', value: t.type, checked: true }))));
      }
      const alerts = answer.data.filter((e) => e.status === 'failing' || (e.status === 'disabled' && e.disabled_reason !== 'user'));
      banner.replaceChildren(
        alerts.length
          ? h(
              'div',
              { class: 'error webhook-alert', role: 'alert' },
              h('strong', null, alerts.length === 1 ? 'An endpoint needs attention. ' : `${alerts.length} endpoints need attention. `),
              h('ul', null, alerts.map((e) => h('li', null, h('code', { class: 'wrap' }, e.url), ': ', e.status === 'failing' ? `failing since ${formatMoment(e.failing_since!)}` : `disabled ${formatMoment(e.disabled_at!)}`))),
              'Deliveries are retried for about a day; an endpoint failing for 5 days is disabled. Fix the receiver, then enable it and replay what failed.',
            )
          : '',
      );
      list.replaceChildren(
        answer.data.length
          ? h('ul', { class: 'webhook-list' }, answer.data.map((e) => endpointCard(e, show, secretBox)))
          : emptyState(h('p', null, 'No endpoint yet. Add one below: every attributed install and sale is then sent to it.')),
      );
    };
    await show();
  },
};

function checkField(label: Child, input: HTMLInputElement): HTMLElement {
  input.id ||= uid('check');
  return h('div', { class: 'field check' }, input, h('label', { for: input.id }, label));
}

function showSecret(box: HTMLElement, e: Endpoint, what: 'created' | 'rotated'): void {
  box.replaceChildren(
    h(
      'section',
      { class: 'card secret-once', 'aria-labelledby': 'secret-title' },
      h('h2', { id: 'secret-title', tabindex: -1 }, what === 'created' ? 'Your signing secret' : 'Your new signing secret'),
      h('p', null, 'Copy it now and keep it on your server: it is shown only this once. ', h('code', { class: 'wrap' }, e.url), ' gets every event signed with it.'),
      h('p', { class: 'secret-line' }, h('code', { class: 'secret' }, e.secret ?? ''), copyButton(e.secret ?? '', 'signing secret')),
      h('p', { class: 'hint' }, 'Verify each delivery in Node with the standardwebhooks package, on the raw body:'),
      h('div', { class: 'code-block' }, h('pre', null, h('code', null, VERIFY_EXAMPLE)), copyButton(VERIFY_EXAMPLE, 'verification example')),
      what === 'rotated' && e.previous_secret_expires_at ? h('p', { class: 'hint' }, `The old secret signs too until ${formatMoment(e.previous_secret_expires_at)}.`) : null,
      h('button', { type: 'button', onclick: () => box.replaceChildren() }, 'I have stored it'),
    ),
  );
}

function endpointCard(e: Endpoint, refresh: () => Promise<void>, secretBox: HTMLElement): HTMLElement {
  const log = h('div', { class: 'delivery-log' });
  const item = h(
    'li',
    { class: 'card webhook', 'data-endpoint': e.id },
    h('h3', { tabindex: -1 }, h('code', { class: 'wrap' }, e.url)),
    h('p', { class: 'badges' }, statusBadge(e), e.include_sandbox ? h('span', { class: 'badge muted' }, 'Sandbox too') : null, e.attributed_only ? null : h('span', { class: 'badge muted' }, 'Unattributed too')),
    e.description ? h('p', null, e.description) : null,
    h(
      'dl',
      { class: 'endpoints' },
      h('dt', null, 'Events'),
      h('dd', null, e.event_types.join(', ')),
      h('dt', null, 'Secret'),
      h('dd', null, h('code', null, `${e.secret_hint}…`), e.previous_secret_expires_at ? ` (the previous one signs too until ${formatMoment(e.previous_secret_expires_at)})` : ''),
      h('dt', null, 'Last success'),
      h('dd', null, when(e.last_success_at)),
      h('dt', null, 'Last attempt'),
      h('dd', null, when(e.last_attempt_at)),
    ),
  );
  const actions = h('div', { class: 'actions' });
  const testType = h('select', { 'aria-label': `Test event type for ${e.url}` }, ['sale.created', 'install.attributed', 'refund.created', 'lead.created'].map((t) => h('option', { value: t }, t)));
  const test = h('button', { type: 'button' }, 'Send test event');
  test.addEventListener('click', () =>
    void submitting(item, async () => {
      await call('POST', `/webhooks/${e.id}/test`, { type: testType.value });
      announce('Test event sent. Its attempt shows in the delivery log.');
      logButton.setAttribute('aria-expanded', 'true');
      await showLog(log, e);
    }),
  );
  const rotate = h('button', { type: 'button' }, 'Rotate secret');
  rotate.addEventListener('click', () =>
    void submitting(item, async () => {
      const rotated = await call<Endpoint>('POST', `/webhooks/${e.id}/rotate-secret`, { grace_seconds: 86_400 });
      showSecret(secretBox, rotated, 'rotated');
      announce('Secret rotated. The old one keeps signing for 24 hours.');
      await refresh();
      secretBox.querySelector<HTMLElement>('h2')?.focus();
    }),
  );
  const toggle = h('button', { type: 'button' }, e.enabled ? 'Disable' : 'Enable');
  toggle.addEventListener('click', () =>
    void submitting(item, async () => {
      await call('PATCH', `/webhooks/${e.id}`, { enabled: !e.enabled });
      announce(e.enabled ? 'Endpoint disabled' : 'Endpoint enabled');
      await refresh();
    }),
  );
  const logButton = h('button', { type: 'button', 'aria-expanded': 'false' }, 'Delivery log');
  logButton.addEventListener('click', () => {
    const open = logButton.getAttribute('aria-expanded') === 'true';
    logButton.setAttribute('aria-expanded', String(!open));
    if (open) log.replaceChildren();
    else void showLog(log, e);
  });
  const remove = h('button', { type: 'button', class: 'danger' }, 'Remove');
  remove.addEventListener('click', () => {
    const confirm = h('button', { type: 'button', class: 'danger' }, 'Yes, remove it');
    const cancel = h('button', { type: 'button' }, 'Cancel');
    confirm.addEventListener('click', () =>
      void submitting(item, async () => {
        await call('DELETE', `/webhooks/${e.id}`);
        announce('Endpoint removed');
        await refresh();
      }),
    );
    cancel.addEventListener('click', () => {
      actions.replaceChildren(...buttons);
      remove.focus();
    });
    actions.replaceChildren(h('span', null, 'Remove this endpoint and its delivery log?'), confirm, cancel);
    cancel.focus();
  });
  const buttons = [testType, test, logButton, rotate, toggle, remove];
  actions.append(...buttons);
  item.append(actions, log);
  return item;
}

const deliveryStatus = (d: Delivery) =>
  d.status === 'succeeded'
    ? h('span', { class: 'badge ok' }, 'Succeeded')
    : d.status === 'failed'
      ? h('span', { class: 'badge bad' }, 'Failed')
      : h('span', { class: 'badge warn' }, d.next_attempt_at ? `Pending (next ${formatMoment(d.next_attempt_at)})` : 'Pending');

const outcome = (status: number | null, error: string | null): Child => [status !== null ? `HTTP ${status}` : '', status !== null && error ? ' · ' : '', error ?? ''];

async function showLog(region: HTMLElement, e: Endpoint, cursor?: string): Promise<void> {
  if (!cursor) region.replaceChildren(loading('deliveries'));
  region.setAttribute('aria-busy', 'true');
  const q = new URLSearchParams({ limit: '20' });
  if (cursor) q.set('cursor', cursor);
  const page = await readInto(region, () => call<{ data: Delivery[]; pagination: Pagination }>('GET', `/webhooks/${e.id}/deliveries?${q}`));
  if (!page) return;
  const rows = page.data.map((d) => {
    const detail = h('tr', { class: 'attempts', hidden: true }, h('td', { colspan: 6 }));
    const more = h('button', { type: 'button', class: 'link', 'aria-expanded': 'false' }, 'Attempts');
    more.addEventListener('click', () => void toggleAttempts(more, detail, e, d));
    const replay = d.status === 'pending' ? null : h('button', { type: 'button' }, 'Replay');
    replay?.addEventListener('click', () =>
      void submitting(region, async () => {
        await call('POST', `/webhooks/${e.id}/deliveries/${d.id}/replay`);
        announce('Delivery sent again');
        await showLog(region, e);
      }),
    );
    return [
      h(
        'tr',
        null,
        h('td', { 'data-label': 'Created' }, formatMoment(d.created_at)),
        h('td', { 'data-label': 'Event' }, d.event_type, d.test ? h('span', { class: 'badge muted' }, 'test') : null),
        h('td', { 'data-label': 'Status' }, deliveryStatus(d)),
        h('td', { 'data-label': 'Attempts', class: 'num' }, d.attempt_count),
        h('td', { 'data-label': 'Last answer' }, outcome(d.response_status, d.error)),
        h('td', { 'data-label': 'Actions' }, more, replay),
      ),
      detail,
    ];
  });
  const table = h(
    'div',
    { class: 'table-wrap', role: 'region', 'aria-label': `Deliveries to ${e.url}`, tabindex: 0 },
    h(
      'table',
      { class: 'deliveries' },
      h('caption', null, 'Deliveries, newest first'),
      h('thead', null, h('tr', null, ['Created', 'Event', 'Status', 'Attempts', 'Last answer', ''].map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', null, rows),
    ),
  );
  const older = page.pagination.has_more ? h('button', { type: 'button', class: 'more' }, 'Older deliveries') : null;
  older?.addEventListener('click', () => void showLog(region, e, page.pagination.next_cursor!));
  region.replaceChildren(page.data.length ? table : emptyState(h('p', null, 'No delivery yet. Send a test event to see one here.')), older ?? '');
  // While a delivery of the newest page is on its way, the log reads itself again (until it is closed).
  if (!cursor && page.data.some((d) => d.status === 'pending' && d.attempt_count === 0)) {
    setTimeout(() => {
      if (region.isConnected && region.contains(table) && !region.querySelector('tr.attempts:not([hidden])')) void showLog(region, e);
    }, 1500);
  }
}

async function toggleAttempts(button: HTMLButtonElement, row: HTMLTableRowElement, e: Endpoint, d: Delivery): Promise<void> {
  const open = button.getAttribute('aria-expanded') === 'true';
  button.setAttribute('aria-expanded', String(!open));
  row.hidden = open;
  if (open) return;
  const cell = row.firstElementChild as HTMLElement;
  cell.replaceChildren(loading('attempts'));
  const detail = await readInto(cell, () => call<Delivery & { attempts: Attempt[] }>('GET', `/webhooks/${e.id}/deliveries/${d.id}`));
  if (!detail) return;
  cell.replaceChildren(
    h('p', { class: 'hint' }, 'Event id ', h('code', null, detail.event_id), ' (the webhook-id header: deduplicate on it)'),
    detail.attempts.length
      ? h(
          'ol',
          { class: 'attempt-list' },
          detail.attempts.map((a) =>
            h(
              'li',
              null,
              h('strong', null, formatMoment(a.at)),
              ` · ${a.duration_ms} ms · `,
              outcome(a.response_status, a.error),
              a.response_excerpt ? h('pre', { class: 'excerpt' }, a.response_excerpt) : null,
            ),
          ),
        )
      : h('p', null, 'Not attempted yet.'),
  );
}
