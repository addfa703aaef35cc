// Package walfollow is the WAL follower: it reads every committed change
// to the configured tables from PostgreSQL's logical replication stream
// (pgoutput) and records it in the ledger, however the row was written:
// through the proxy, by a migration, a trigger, a column default, through
// a view or a partition, or by a second service with its own connection
// string. It is the ground truth for PostgreSQL; the proxy's write-ahead
// intents are the early view of the same writes.
//
// The contract:
//
//   - One publication and one slot, both named by Config.Name, cover the
//     configured tables: partitions are published through their root,
//     inheritance children with their parent, and only the columns the
//     rules read (id, subjects, replica identity), so the vectors
//     themselves are never streamed. Tables with no replica identity are
//     published for inserts and truncates only (publishing their updates
//     would make the server refuse every UPDATE and DELETE on them).
//   - Each committed INSERT or UPDATE is tagged from the values as stored,
//     by the same rule as the proxy's (extract.Stored); DELETE and
//     TRUNCATE mark records deleted. See ledger.Observer for how these
//     facts sit beside the proxy's.
//   - The slot's confirmed flush position advances only after the
//     ledger's transaction holding the changes is durable, so a crash of
//     the proxy, the ledger or the server loses no committed row: the
//     server sends again everything after the confirmed position. The
//     rows of a transaction still being read go to the ledger without a
//     fsync (ledger.Observer.ObserveNoSync); the batch that ends it is
//     fsynced, and only that moves the confirmed position.
//   - The follower reads on while a batch is written to the ledger, one
//     batch in the air and up to readAhead batches' worth waiting, and
//     keeps reporting to the server meanwhile, so a long ledger write
//     neither stalls the stream nor trips wal_sender_timeout.
//   - Transactions read after a big one (more than a batch) overtake it
//     in the ledger between two of its batches when they touch none of
//     its records (heldTx); the confirmed position still moves in stream
//     order, past them all once the big one is durable.
//   - A slot the follower creates starts with the rows the configured
//     tables hold, read in the snapshot the slot exports and recorded
//     durably before anything is streamed (createSlot): no gap, no row
//     twice. A slot whose rows cannot be recorded is dropped again. Once
//     they are durable the ledger marks the slot's initial read done
//     (ledger.InitialReads); a slot found without the mark (its reader
//     killed, a new ledger, an earlier release) is dropped and made again
//     unless another process holds it (makeSlot), and AwaitCommitted
//     waits for the mark too.
//   - A relation that joins the publication while the slot exists (a
//     table created, or dropped and created again, around the proxy) had
//     rows the stream will never carry: the follower reads them at the
//     next transaction boundary and records them before anything after
//     (adopt).
//   - A slot serves one consumer at a time, so among proxies sharing a
//     ledger (and the slot name) one follows and the others wait for it to
//     let go.
package walfollow
