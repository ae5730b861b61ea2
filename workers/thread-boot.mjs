// The queue consumers' thread runs TypeScript like the rest of the service: worker
// threads do not inherit the main thread's tsx loader, so register it here first.
import { register } from 'tsx/esm/api';

register();
await import('./thread.ts');
