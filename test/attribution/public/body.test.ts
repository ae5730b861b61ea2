import { describe, expect, it } from 'vitest';
import { optionalId, parseIsoInstant } from '../../../src/attribution/public/body';

describe('parseIsoInstant', () => {
  it('reads dates, times, fractions and offsets; a time without an offset is UTC', () => {
    const cases: [string, string][] = [
      ['2026-11-01', '2026-11-01T00:00:00.000Z'],
      ['2026-11-01T08:00:00Z', '2026-11-01T08:00:00.000Z'],
      ['2026-11-01T08:00Z', '2026-11-01T08:00:00.000Z'],
      ['2026-11-01T08:00:00.123456Z', '2026-11-01T08:00:00.123Z'],
      ['2026-11-01T08:00:00.5Z', '2026-11-01T08:00:00.500Z'],
      ['2026-11-01T08:00:00+01:00', '2026-11-01T07:00:00.000Z'],
      ['2026-11-01T08:00:00+0100', '2026-11-01T07:00:00.000Z'],
      ['2026-11-01T08:00:00-05', '2026-11-01T13:00:00.000Z'],
      ['2026-11-01T08:00:00', '2026-11-01T08:00:00.000Z'],
      ['2026-11-01 08:00:00Z', '2026-11-01T08:00:00.000Z'],
      ['2024-02-29T12:00:00Z', '2024-02-29T12:00:00.000Z'],
    ];
    for (const [text, iso] of cases) expect(new Date(parseIsoInstant(text)).toISOString(), text).toBe(iso);
  });

  it('refuses what is not on the calendar or not ISO 8601', () => {
    for (const text of ['2026-02-30', '2025-02-29T00:00:00Z', '2026-13-01', '2026-00-10', '2026-01-01T24:00:00Z', '2026-01-01T10:60:00Z',
      '2026-01-01T10:00:61Z', '2026-01-01T10:00:00+25:00', '2026-01-01T10:00:00+01:75', 'yesterday', '1 Jan 2026', '2026-1-1', '20260101T100000Z', '']) {
      expect(parseIsoInstant(text), text).toBeNaN();
    }
  });
});

describe('optionalId', () => {
  it('takes strings and whole numbers JSON carries exactly, and refuses others', () => {
    const id = optionalId(128);
    expect(id.parse(' order-1 ')).toBe('order-1');
    expect(id.parse(1001)).toBe('1001');
    expect(id.parse(null)).toBeNull();
    expect(id.safeParse(2 ** 60).success).toBe(false);
    expect(id.safeParse(12.5).success).toBe(false);
  });
});
