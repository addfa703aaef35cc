// Package pcstore is the Pinecone wing's store connector: one
// connector.Layer per configured namespace rule of an index, talking to the
// index host itself (never the proxy) with go-pinecone v5 over gRPC, or,
// for a document index (Config.API APIDocuments, API version 2026-07),
// over REST through /namespaces/{namespace}/documents/ (documents.go). A
// document index is searched by fetches filtered on each subject field,
// page by page, with only the subject fields (no probe vector); its
// deletes, LSN headers and verification are otherwise the vectors' below.
//
// Finding a subject's records. Pinecone cannot list records by metadata, so
// a layer looks in two places and keeps only records whose metadata names
// the subject now:
//
//   - the ids the ledger holds for the subject, fetched in chunks of 1,000;
//   - the ids found by a query filtered on each subject field
//     ({field: {"$eq": subject}}, which matches a list field holding the
//     subject too, and {"$eq": n} as well when the subject is the text of a
//     number n), with includeMetadata false, topK 10,000 and a probe vector
//     of the index's dimension (the filter selects; the vector only orders).
//     A query that returns fewer than topK matches has returned them all;
//     one that returns topK is repeated with up to 15 other probe vectors
//     (each orders the records differently), and what they all miss is
//     found by the next look, once the records found are deleted. These
//     queries catch records written before Lethe.
//
// Both sets are fetched and kept only when the record's metadata names the
// subject (a string equal to it, a number whose JSON text is it, or a list
// holding it: extract's rule for tagging writes), so that a record moved to
// another subject by an update keeps its data even though the ledger still
// lists its id under the old one.
//
// Deleting is by those ids only, in chunks of 1,000, each journaled
// (beforeCommit) before it is sent; deleting by filter is not used, since it
// deletes records whose ids nobody learns and the certificate lists the ids
// it deleted.
//
// Verifying absence. Pinecone's deletes become visible late. Residual
// repeats the search above with backoff (100 ms doubling to 2 s) until it
// finds nothing or the verify deadline passes. go-pinecone does not expose
// response headers, so the layer reads them itself through a gRPC
// interceptor: a delete's x-pinecone-request-lsn is remembered per
// namespace, and absence counts only once the reads' x-pinecone-max-indexed-lsn
// has reached it; reads that have reached it and still find records end the
// polling at once (those records are there, not lagging). When the index
// sends no LSN headers, absence rests on polling alone, and the
// certificate's method says so.
package pcstore
