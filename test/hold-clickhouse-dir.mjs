// Holds an embedded ClickHouse directory, as a service still stopping would, until its stdin closes.
import { createChdbConnection } from 'chdb/connection';

createChdbConnection({ path: process.argv[2] });
process.stdout.write('held\n');
process.stdin.on('end', () => process.exit(0)).resume();
