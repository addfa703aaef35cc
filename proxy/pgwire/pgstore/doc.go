// Package pgvector reaches the PostgreSQL (pgvector) store itself, with the
// operator's own credentials, for what Lethe must check there: which
// records exist (to resolve write-ahead intents left pending by a crash),
// which functions, triggers and rules write configured tables (the writer
// catalog capture refuses or records calls of), and, for forget, deleting
// and verifying absence. Identifiers are quoted and values are always
// parameters.
package pgstore
