// Package pgvector reaches the PostgreSQL (pgvector) store itself, with the
// operator's own credentials, for what Lethe must check there: which
// records exist (to resolve write-ahead intents left pending by a crash),
// and later to delete and verify absence for forget. Identifiers are
// quoted and values are always parameters.
package pgvector
