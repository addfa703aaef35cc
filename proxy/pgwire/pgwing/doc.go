// Package pgwing is the PostgreSQL wing: the one constructor (New) that
// builds the store's whole part in the proxy from the compiled config, the
// capture core and the ledger, as a connector.Wing. It puts together the
// relay (proxy/pgwire), its capture adapter (pgcapture), the WAL follower
// (walfollow) and the store connector (pgstore), and starts and stops what
// runs beside them: the recovery of intents a crash left pending and the
// watch of the catalog's server-side writers and coverage.
//
// It is a package of its own because the relay cannot import its capture
// adapter (pgcapture imports the relay's Observer contract).
//
// The life of a serving wing: New (no I/O), Listen (postgres.tls's files,
// postgres.listen), Prepare (recovery, the first catalog read, the
// follower's slot and initial read), Serve, Shutdown (relay drained, then
// the follower, recovery and the catalog watch stopped), Close. The
// commands that only read or delete (check, reconcile, sweep, wal) use
// Coverage, Scanners, Retainers and OpenStore without serving.
package pgwing
