/**
 * Instants the stores can hold: 1970 to 2099 (Postgres refuses year 0; ClickHouse clamps a Date or
 * DateTime outside its range and partitions by month). One bound for conversions, placements and snapshots.
 */
export const EARLIEST_INSTANT = Date.UTC(1970, 0, 1);
export const LATEST_INSTANT = Date.UTC(2100, 0, 1);
export const isRecordableInstant = (ms: number) => ms >= EARLIEST_INSTANT && ms < LATEST_INSTANT;
