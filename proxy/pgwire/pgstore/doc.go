// Package pgvector reaches the PostgreSQL (pgvector) store itself, with the
// operator's own credentials, for what Lethe must check there: which
// records exist (to resolve write-ahead intents left pending by a crash),
// which functions, triggers and rules write configured tables (the writer
// catalog capture refuses or records calls of), and, for forget, deleting
// and verifying absence, and (a table's physical: report) counting the
// pages of the table, its TOAST table and its indexes that still hold the
// deleted records' bytes, read with pageinspect's get_raw_page or the
// lethe_raw_page wrapper. Identifiers are quoted and values are always
// parameters.
package pgstore
