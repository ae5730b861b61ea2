-- Verified and public ledger rows (docs/webhooks.md): `verified` = 1 for a row a provider webhook
-- wrote; `supersedes` names the public row of the same key a verified row replaces. Every reader
-- counts a row only while no row of its brand names it (src/attribution/reporting/counts.ts).
-- Rows stored before this migration read `verified` from their source.
ALTER TABLE ledger ADD COLUMN IF NOT EXISTS verified UInt8 DEFAULT source NOT IN ('pixel', 'sdk') AFTER sandbox;

ALTER TABLE ledger ADD COLUMN IF NOT EXISTS supersedes Nullable(String) AFTER verified;
