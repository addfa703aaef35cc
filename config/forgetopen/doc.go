// Package forgetopen builds forget from a configuration: the certifier
// (forget.signing_key, forget.trusted_keys, the transparency log kept in
// the ledger under forget.log_origin), whose key the log records before
// anything it signs, the engine over the layers of every wing, and the
// admin API over the engine.
// Everything that signs and logs (forget in the proxy, lethe-proxy sweep,
// reconcile --adopt, replay) gets its certifier here; the commands that
// run once over the stores open their ledger and certifier as a Job.
//
// It is where config and engine meet: it imports both, and engine never
// imports config.
package forgetopen
