import { v7 } from 'uuid';

/**
 * A new id for a row of a table that grows on every posting (ledger transactions, reservations): a UUID
 * of version 7 (RFC 9562: the time in milliseconds, then a counter and random bits), so that new rows'
 * keys follow one another. Their primary keys, and the ledger lines' indexes that end with the
 * transaction id (by item, location, facility), then take new entries at the end of each range instead
 * of anywhere in it: a random id dirtied a leaf of each index anywhere in the tree, and after every
 * checkpoint each such leaf's first change wrote the whole page to the WAL (`BENCH_WAL=1`: about a kB per
 * adjustment on 10,000 balances, 3 kB when the postings were slower). Clients see a UUID like any other.
 */
export const timeOrderedId = (): string => v7();
