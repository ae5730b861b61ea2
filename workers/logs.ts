import type { Logger } from 'pino';
import { RepeatedLog } from '../src/repeated-log';

/** A batch worker's failures that may repeat many times a second: each is logged once a second at most, with its count. */
const BATCH_LOGS = {
  /**
   * When Redis loses its data (emptied, restarted without its append-only file, failed over),
   * every job in hand fails to complete with "Missing key": expected after such a loss.
   */
  vanished: {
    level: 'warn',
    countField: 'jobs',
    message:
      'jobs vanished from Redis before they completed (Redis emptied or failed over?): installs and ledger rows not yet confirmed are re-sent from the outbox; clicks not yet written are lost',
  },
  /** A ClickHouse outage fails every batch, retried with backoff. */
  insertFailures: { level: 'warn', countField: 'batches', message: 'batch insert failed; jobs will retry' },
  /** Other worker errors (Redis away makes every worker report one per attempt). */
  workerErrors: { level: 'error', countField: 'errors', message: 'worker error' },
  /** A batch is written, but the notice that it landed failed: cached answers stay until their age runs out. */
  noticeFailures: { level: 'warn', countField: 'batches', message: 'could not announce written facts; cached answers may lag' },
} as const;

export type BatchLogs = Record<keyof typeof BATCH_LOGS, RepeatedLog> & {
  /** Logs what is counted and not yet logged (at shutdown). */
  flush(): void;
};

export function batchLogs(log: Logger): BatchLogs {
  const logs = Object.fromEntries(
    Object.entries(BATCH_LOGS).map(([name, { level, countField, message }]) => [name, new RepeatedLog(log, level, message, { countField })]),
  ) as Record<keyof typeof BATCH_LOGS, RepeatedLog>;
  return {
    ...logs,
    flush() {
      for (const repeated of Object.values(logs)) repeated.flush();
    },
  };
}
