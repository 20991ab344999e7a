import type { App } from '../../core/context.ts';

/**
 * Drops the ledger entries of `data` (a data database) older than ORGMEM_LEDGER_DAYS (docs/trust.md,
 * "The influence ledger"): the hourly writes sweep. One statement by the time index, whatever the
 * tenant; the cut-off is sent, so every Citus shard deletes by the same instant.
 */
export async function dropOldLedgerEntries(data: App): Promise<void> {
  const cutoff = new Date(Date.now() - data.config.ledgerDays * 86_400_000).toISOString();
  await data.db.query('delete from memory_ledger where at < $1::timestamptz', [cutoff]);
}
