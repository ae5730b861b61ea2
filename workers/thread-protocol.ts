import type { MetricObjectWithValues, MetricValue } from 'prom-client';

/** Messages between the API thread and the workers' thread (workers/thread.ts). */
export type ThreadMessage =
  | { type: 'ready' | 'drain' | 'drained' | 'close' | 'closed' }
  | { type: 'metrics'; metrics: MetricObjectWithValues<MetricValue<string>>[] };
