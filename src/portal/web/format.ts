import type { Money } from './api';

/** Numbers, money and dates in the reader's locale (Intl); days are UTC, as the API counts them. */
export const locale = navigator.languages?.[0] ?? navigator.language ?? 'en-US';

const integer = new Intl.NumberFormat(locale, { maximumFractionDigits: 0 });
const percent = new Intl.NumberFormat(locale, { style: 'percent', maximumFractionDigits: 1, signDisplay: 'exceptZero' });
const unsignedPercent = new Intl.NumberFormat(locale, { style: 'percent', maximumFractionDigits: 1 });
const moneyFormats = new Map<string, Intl.NumberFormat>();
const day = new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeZone: 'UTC' });
const shortDay = new Intl.DateTimeFormat(locale, { month: 'short', day: 'numeric', timeZone: 'UTC' });
const moment = new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' });

export const formatInt = (n: number) => integer.format(n);

export function formatMoney(amount: number, currency: string): string {
  let f = moneyFormats.get(currency);
  if (!f) {
    try {
      f = new Intl.NumberFormat(locale, { style: 'currency', currency });
    } catch {
      // A code Intl does not know still shows, with the code after the number.
      f = new Intl.NumberFormat(locale, { minimumFractionDigits: 2, maximumFractionDigits: 2 });
      return `${f.format(amount)} ${currency}`;
    }
    moneyFormats.set(currency, f);
  }
  return f.format(amount);
}

/** Currencies in a stable order: the largest amount first. */
export function currencies(...totals: Money[]): string[] {
  const all = new Map<string, number>();
  for (const t of totals) for (const [c, v] of Object.entries(t)) all.set(c, Math.max(all.get(c) ?? 0, Math.abs(v)));
  return [...all.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).map(([c]) => c);
}

/** "12 Nov 2026" for a YYYY-MM-DD day. */
export const formatDay = (date: string) => day.format(new Date(`${date}T00:00:00Z`));
export const formatShortDay = (date: string) => shortDay.format(new Date(`${date}T00:00:00Z`));
export const formatMoment = (iso: string) => `${moment.format(new Date(iso))} UTC`;

export type Change = { text: string; label: string; direction: 'up' | 'down' | 'flat' | 'new' };

/** The change of a number against the previous period, as shown and as read out. */
export function change(current: number, previous: number, show: (n: number) => string = formatInt): Change {
  if (current === previous) return { text: 'no change', label: `no change from the previous period (${show(previous)})`, direction: 'flat' };
  if (previous === 0) return { text: 'new', label: `up from ${show(0)} in the previous period`, direction: 'new' };
  const ratio = (current - previous) / Math.abs(previous);
  const direction = current > previous ? 'up' : 'down';
  return { text: percent.format(ratio), label: `${direction} ${unsignedPercent.format(Math.abs(ratio))} from ${show(previous)} in the previous period`, direction };
}
