// Package translog is Lethe's transparency log: an append-only Merkle tree of
// opaque records (RFC 6962, https://www.rfc-editor.org/rfc/rfc6962, built on
// golang.org/x/mod/sumdb/tlog), one record per erasure event, whose heads
// are published as checkpoints in the c2sp.org/tlog-checkpoint format,
// signed as c2sp.org/signed-note notes (Ed25519, golang.org/x/mod/sumdb/note)
// under a key whose name is the log's origin.
//
// The log knows nothing about what a record means; callers guarantee that
// records hold no personal data, because nothing in a log is ever erased.
//
// The operator is not trusted. A client that kept any checkpoint it once
// saw can ask for the latest one and a consistency proof between them, and
// VerifyConsistency tells it whether the log was truncated (ErrTruncated)
// or forked (ErrForked) since, with no head recorded out of band.
// VerifyInclusion checks that a record is in a checkpoint's tree; both
// checks run in time bounded by the proof (CheckInclusion and
// CheckConsistency, which certificate verifiers use too), whatever size a checkpoint states. On its side,
// Log.Sign never signs a checkpoint
// inconsistent with one it signed before (c2sp.org/tlog-checkpoint,
// "Signatures").
//
// Checkpoint bodies are read by ParseCheckpointText, the one parser:
// package certificate imports this package (and no other of Lethe's
// network or database code) and opens checkpoints with it, so the log
// reads its own checkpoints exactly as certificate verifiers do.
//
// Records, stored hashes and checkpoints live in a Storage: MemoryStorage
// for tests, and the ledger's SQLite file or PostgreSQL schema in
// production (package ledger implements Storage without importing this
// package).
//
// The types Hash, RecordProof, TreeProof and HashReader are those of
// golang.org/x/mod/sumdb/tlog, re-exported so that callers need import
// only this package.
package translog

import merkle "golang.org/x/mod/sumdb/tlog"

// Hash is a SHA-256 hash of the tree (RFC 6962).
type Hash = merkle.Hash

// RecordProof is an inclusion proof ("Merkle audit path", RFC 6962
// section 2.1.1), from the leaf's sibling up to the root's child.
type RecordProof = merkle.RecordProof

// TreeProof is a consistency proof (RFC 6962 section 2.1.2).
type TreeProof = merkle.TreeProof

// HashReader reads stored hashes by their stored hash index
// (merkle.StoredHashIndex).
type HashReader = merkle.HashReader
