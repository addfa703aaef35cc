// Package ledgeropen opens the ledger a configuration names, bound to the
// subject salt: where the ledger is (capture.ledger, or the SQLite file
// beside the configuration), the salt from the environment (never the YAML
// file, so that a configuration can be shared and committed without the
// secret), and the rule that a ledger is never read or written under
// another salt than its own (ledger.SaltKeeper).
//
// It is where config and ledger meet: it imports both, and neither imports
// it.
package ledgeropen
