import { api } from '../api';
import { announce, append, h, uid } from '../dom';
import { formatMoment } from '../format';
import type { PortalPage } from '../page';
import { copyButton, field, loading, readInto, submitting } from '../ui';

type Status = 'awaiting_first_event' | 'connected' | 'error';
type Connection = {
  id: string;
  provider: string;
  status: Status;
  last_error: string | null;
  settings: Record<string, unknown>;
  webhook_url: string;
  last_event_at: string | null;
  signing_secret_set: boolean;
};
type Card = {
  provider: string;
  title: string;
  dashboard: string;
  steps: string[];
  signing_secret: { required: boolean; what: string };
  required_settings: string[];
  optional_settings: string[];
  connected: boolean;
  connection_id: string | null;
};

const STATUS: Record<Status, [string, string]> = {
  awaiting_first_event: ['Waiting for the first event', 'warn'],
  connected: ['Connected', 'ok'],
  error: ['Error', 'bad'],
};

/**
 * Connections: a billing provider's webhook per card. Connecting mints the webhook URL to
 * paste into the provider's dashboard; the signing secret can be set or replaced, never read.
 */
export const connectionsPage: PortalPage = {
  path: 'connections',
  title: 'Connections',
  ranged: false,
  async render(view) {
    const body = h('div', { 'aria-busy': 'true' }, loading('connections'));
    view.append(
      h('h1', { tabindex: -1 }, 'Connections'),
      h('p', { class: 'lead' }, 'Connect your billing provider so that in-app purchases, renewals and refunds are credited to creators.'),
      body,
    );
    const show = async (focusProvider?: string) => {
      const answer = await readInto(body, () => api<{ data: Connection[]; setup_cards: Card[] }>('GET', '/attribution/connections'));
      if (!answer) return;
      body.replaceChildren(
        h(
          'ul',
          { class: 'connection-list' },
          answer.setup_cards.map((card) => providerCard(card, answer.data.find((c) => c.provider === card.provider) ?? null, show)),
        ),
      );
      if (focusProvider) body.querySelector<HTMLElement>(`[data-provider="${focusProvider}"] h2`)?.focus();
    };
    await show();
  },
};

function providerCard(card: Card, connection: Connection | null, refresh: (focus?: string) => Promise<void>): HTMLElement {
  const item = h('li', { class: 'card connection', 'data-provider': card.provider }, h('h2', { tabindex: -1 }, card.title));
  const stepList = h('ol', null, card.steps.map((s) => h('li', null, s)));
  if (!connection) {
    // Most brands use one provider: the others stay folded until asked for.
    item.append(
      h('p', { class: 'badges' }, h('span', { class: 'badge muted' }, 'Not connected')),
      h('details', { class: 'steps' }, h('summary', null, `Set up ${card.title}`), h('p', null, `In ${card.dashboard}:`), stepList, connectForm(card, refresh)),
    );
    return item;
  }
  const steps = h('details', { class: 'steps' }, h('summary', null, `Steps in ${card.dashboard}`), stepList);
  const [statusText, tone] = STATUS[connection.status];
  append(item, [
    h('p', { class: 'badges' }, h('span', { class: `badge ${tone}` }, statusText)),
    connection.last_error ? h('p', { class: 'error-text' }, `Last delivery refused: ${connection.last_error.replaceAll('_', ' ')}.`) : null,
    h(
      'dl',
      { class: 'endpoints' },
      h('dt', null, 'Webhook URL'),
      h('dd', null, h('code', { class: 'webhook-url' }, connection.webhook_url), copyButton(connection.webhook_url, `${card.title} webhook URL`)),
      h('dt', null, 'Last event'),
      h('dd', null, connection.last_event_at ? formatMoment(connection.last_event_at) : 'None yet'),
      h('dt', null, 'Signing secret'),
      h('dd', { class: 'secret-state' }, connection.signing_secret_set ? 'Stored (it is never shown again)' : 'Not set'),
      ...Object.entries(connection.settings).flatMap(([k, v]) => [h('dt', null, k), h('dd', null, h('code', null, typeof v === 'string' ? v : JSON.stringify(v)))]),
    ),
    steps,
    secretForm(card, connection, refresh),
    removeControl(card, connection, refresh),
  ]);
  return item;
}

function connectForm(card: Card, refresh: (focus?: string) => Promise<void>): HTMLElement {
  const secret = h('input', { type: 'password', autocomplete: 'off', required: card.signing_secret.required });
  const settings = [...card.required_settings.map((k) => settingInput(k, true)), ...card.optional_settings.map((k) => settingInput(k, false))];
  const form = h(
    'form',
    { class: 'connect' },
    field(`Signing secret${card.signing_secret.required ? '' : ' (optional)'}`, secret, `${sentence(card.signing_secret.what)}. Stored encrypted; never shown again.`),
    settings.map((s) => s.control),
    h('button', { type: 'submit', class: 'primary' }, `Connect ${card.title}`),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void submitting(form, async () => {
      const values: Record<string, unknown> = {};
      for (const s of settings) {
        const value = s.value();
        if (value !== undefined) values[s.key] = value;
      }
      await api('POST', '/attribution/connections', {
        provider: card.provider,
        ...(secret.value ? { signing_secret: secret.value } : {}),
        ...(Object.keys(values).length ? { settings: values } : {}),
      });
      announce(`${card.title} connected. Paste its webhook URL into ${card.dashboard}.`);
      await refresh(card.provider);
    });
  });
  return form;
}

/** The setup cards describe the secret in lower case, as part of a sentence. */
const sentence = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

/**
 * The setup cards name their settings, not their types: these few are not free text (the
 * provider would refuse the text "true" for a flag, "1234" for a number).
 */
const SETTING_KINDS: Record<string, 'flag' | 'integer' | 'secret' | readonly string[]> = {
  first_invoice_as_purchase: 'flag',
  app_apple_id: 'integer',
  sandbox_secret: 'secret',
  environment: ['both', 'production', 'sandbox'],
};

type SettingInput = { key: string; control: HTMLElement; value(): unknown };

/** A setting's control, and its value as the API takes it (undefined: left out). */
function settingInput(key: string, required: boolean): SettingInput {
  const kind = SETTING_KINDS[key];
  const label = `${key}${required ? '' : ' (optional)'}`;
  if (kind === 'flag') {
    const box = h('input', { type: 'checkbox', name: key, id: uid('setting') });
    return { key, control: h('div', { class: 'field check' }, box, h('label', { for: box.id }, key)), value: () => (box.checked ? true : undefined) };
  }
  if (typeof kind === 'object') {
    const select = h('select', { name: key, required }, h('option', { value: '' }, required ? 'Choose one' : 'Default'), kind.map((v) => h('option', { value: v }, v)));
    return { key, control: field(label, select), value: () => select.value || undefined };
  }
  const integer = kind === 'integer';
  const input = h('input', { type: kind === 'secret' ? 'password' : integer ? 'number' : 'text', name: key, required, autocomplete: 'off', spellcheck: 'false', min: integer ? 1 : null, step: integer ? 1 : null });
  const value = () => {
    const text = input.value.trim();
    if (!text) return undefined;
    return integer ? Number(text) : settingValue(text);
  };
  return { key, control: field(label, input, key.endsWith('_map') ? 'A JSON object' : undefined), value };
}

/** Settings are text; one written as a JSON object (such as event_name_map) is sent as one. */
function settingValue(text: string): unknown {
  if (!text.startsWith('{')) return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function secretForm(card: Card, connection: Connection, refresh: (focus?: string) => Promise<void>): HTMLElement {
  const secret = h('input', { type: 'password', autocomplete: 'off', required: true });
  const form = h(
    'form',
    { class: 'secret' },
    field(connection.signing_secret_set ? 'Replace the signing secret' : 'Set the signing secret', secret, `${sentence(card.signing_secret.what)}.`),
    h('button', { type: 'submit' }, 'Save secret'),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void submitting(form, async () => {
      await api('PATCH', `/attribution/connections/${connection.id}`, { signing_secret: secret.value });
      announce(`${card.title} signing secret saved`);
      await refresh(card.provider);
    });
  });
  return form;
}

function removeControl(card: Card, connection: Connection, refresh: (focus?: string) => Promise<void>): HTMLElement {
  const box = h('div', { class: 'actions' });
  const remove = h('button', { type: 'button', class: 'danger' }, `Disconnect ${card.title}`);
  remove.addEventListener('click', () => {
    const yes = h('button', { type: 'button', class: 'danger' }, 'Yes, disconnect');
    const cancel = h('button', { type: 'button' }, 'Cancel');
    yes.addEventListener('click', () => {
      void submitting(box, async () => {
        await api('DELETE', `/attribution/connections/${connection.id}`);
        announce(`${card.title} disconnected`);
        await refresh(card.provider);
      });
    });
    cancel.addEventListener('click', () => {
      box.replaceChildren(remove);
      remove.focus();
    });
    box.replaceChildren(h('span', null, 'Its webhook URL stops working at once.'), yes, cancel);
    cancel.focus();
  });
  box.append(remove);
  return box;
}
