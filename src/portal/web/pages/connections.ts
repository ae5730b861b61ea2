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
  /** While no secret authenticates deliveries: what that allows, in words; else null. */
  signing_secret_warning: string | null;
};
type Card = {
  provider: string;
  title: string;
  dashboard: string;
  steps: string[];
  signing_secret: { used: boolean; required: boolean; what: string; without: string | null };
  settings: Setting[];
  connected: boolean;
  connection_id: string | null;
};

/** A setting as the setup card describes it (docs/webhooks.md, Connections). */
type Setting = {
  key: string;
  type: 'text' | 'boolean' | 'number' | 'choice' | 'secret' | 'map';
  required: boolean;
  options?: string[];
  default?: string | number | boolean;
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
    // Said before anything else about the connection: it decides who can post counted events.
    connection.signing_secret_warning ? h('p', { class: 'notice sandbox-note unsigned', role: 'note' }, connection.signing_secret_warning) : null,
    h(
      'dl',
      { class: 'endpoints' },
      h('dt', null, 'Webhook URL'),
      h('dd', null, h('code', { class: 'webhook-url' }, connection.webhook_url), copyButton(connection.webhook_url, `${card.title} webhook URL`)),
      h('dt', null, 'Last event'),
      h('dd', null, connection.last_event_at ? formatMoment(connection.last_event_at) : 'None yet'),
      card.signing_secret.used ? [h('dt', null, 'Signing secret'), h('dd', { class: 'secret-state' }, connection.signing_secret_set ? 'Stored (it is never shown again)' : 'Not set')] : [],
      ...Object.entries(connection.settings).flatMap(([k, v]) => [h('dt', null, k), h('dd', null, h('code', null, typeof v === 'string' ? v : JSON.stringify(v)))]),
    ),
    steps,
    settingsForm(card, connection, refresh),
    card.signing_secret.used ? secretForm(card, connection, refresh) : null,
    removeControl(card, connection, refresh),
  ]);
  return item;
}

function connectForm(card: Card, refresh: (focus?: string) => Promise<void>): HTMLElement {
  const secret = h('input', { type: 'password', autocomplete: 'off', required: card.signing_secret.required });
  const settings = card.settings.map((s) => settingInput(s));
  const form = h(
    'form',
    { class: 'connect' },
    card.signing_secret.used
      ? field(`Signing secret${card.signing_secret.required ? '' : ' (optional)'}`, secret, `${sentence(card.signing_secret.what)}. Stored encrypted; never shown again.`)
      : null,
    card.signing_secret.without ? h('p', { class: 'notice sandbox-note unsigned', role: 'note' }, card.signing_secret.without) : null,
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

type SettingInput = { key: string; control: HTMLElement; value(): unknown };

/**
 * A setting's control, filled with its `current` value, and its value as the API takes it
 * (undefined: left blank). A secret is never answered, so its field starts blank; `hint` says whether one is stored.
 */
function settingInput(setting: Setting, current?: unknown, hint?: string): SettingInput {
  const { key, type, required } = setting;
  const label = `${key}${required ? '' : ' (optional)'}`;
  if (type === 'boolean') {
    const box = h('input', { type: 'checkbox', name: key, id: uid('setting'), checked: (current ?? setting.default) === true });
    return { key, control: h('div', { class: 'field check' }, box, h('label', { for: box.id }, key)), value: () => box.checked };
  }
  if (type === 'choice') {
    const blank = required ? 'Choose one' : setting.default === undefined ? 'None' : `Default (${setting.default})`;
    const options = (setting.options ?? []).map((v) => h('option', { value: v, selected: v === current }, v));
    const select = h('select', { name: key, required }, h('option', { value: '' }, blank), options);
    return { key, control: field(label, select), value: () => select.value || undefined };
  }
  const number = type === 'number';
  const input = h('input', {
    type: type === 'secret' ? 'password' : number ? 'number' : 'text',
    name: key,
    required,
    autocomplete: 'off',
    spellcheck: 'false',
    min: number ? 1 : null,
    step: number ? 1 : null,
    placeholder: typeof setting.default === 'string' ? setting.default : null,
    value: current === undefined ? null : typeof current === 'object' ? JSON.stringify(current) : String(current),
  });
  const value = () => {
    const text = input.value.trim();
    if (!text) return undefined;
    return number ? Number(text) : type === 'map' ? jsonOrText(text) : text;
  };
  return { key, control: field(label, input, type === 'map' ? 'A JSON object, such as {"your name": "their name"}' : hint), value };
}

/**
 * Changes a connection's settings (PATCH merges them). A setting emptied is sent as null,
 * which removes it (its default applies again); a secret left blank stays as stored.
 */
function settingsForm(card: Card, connection: Connection, refresh: (focus?: string) => Promise<void>): HTMLElement {
  // Whether a secret setting is stored is answered as `<key>_set` (Adapty's sandbox_secret_set).
  const stored = (s: Setting) => ((connection as Record<string, unknown>)[`${s.key}_set`] ? 'Stored; leave blank to keep it.' : 'Not set.');
  const settings = card.settings.map((s) => ({ secret: s.type === 'secret', input: settingInput(s, connection.settings[s.key], s.type === 'secret' ? stored(s) : undefined) }));
  const form = h('form', { class: 'settings' }, settings.map((s) => s.input.control), h('button', { type: 'submit' }, 'Save settings'));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void submitting(form, async () => {
      const values: Record<string, unknown> = {};
      for (const { secret, input } of settings) {
        const value = input.value();
        if (value !== undefined || !secret) values[input.key] = value ?? null;
      }
      await api('PATCH', `/attribution/connections/${connection.id}`, { settings: values });
      announce(`${card.title} settings saved`);
      await refresh(card.provider);
    });
  });
  return h('details', { class: 'steps' }, h('summary', null, 'Change settings'), form);
}

/** A map is sent as the JSON object written; text that is not JSON is sent as is, for the API to refuse in words. */
function jsonOrText(text: string): unknown {
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
