// Package emulator is an in-memory emulator of one Pinecone index's data
// plane, for tests and demos where Pinecone itself cannot be reached.
//
// One listener serves both of Pinecone's data-plane protocols, as Pinecone
// Local does: the REST API (HTTP/1.1 or HTTP/2, JSON) and the gRPC service
// VectorService (HTTP/2: cleartext with prior knowledge, or TLS with ALPN h2).
// gRPC is served by hand over net/http and protobuf is decoded and encoded
// with protowire from the public field numbers, so the emulator shares no
// generated code with the SDKs that prove it.
//
// Emulated:
//   - namespaces, created by the first write; "", an absent namespace and
//     "__default__" are the same one;
//   - vectors with dense values, sparse values and metadata (a JSON object,
//     google.protobuf.Struct in gRPC);
//   - Upsert, Update (values, sparse values, setMetadata merged key by key;
//     or setMetadata by filter, with dryRun), Delete (ids, deleteAll, filter),
//     Fetch, List (prefix, limit, paginationToken), Query (topK, vector or id,
//     cosine, dotproduct or euclidean as configured, metadata filters with
//     $eq $ne $in $nin $gt $gte $lt $lte $exists $and $or, includeValues,
//     includeMetadata), DescribeIndexStats (with filter), ListNamespaces,
//     DescribeNamespace, DeleteNamespace, in both protocols;
//   - REST POST /records/namespaces/{namespace}/upsert (NDJSON records with
//     "_id" or "id"; the other fields become metadata; 201) and
//     /records/namespaces/{namespace}/search (records_search.go: a text
//     query scored by the words a record's string fields hold, in place of
//     integrated embedding; a vector query; a query by id; filter, fields);
//   - the API version 2026-07's documents (documents.go, documents_read.go):
//     POST /namespaces/{namespace}/documents/upsert (202 {"upserted_count"};
//     a document is "_id" and top-level fields, replaced whole; names
//     starting with "_" or "$" refused), update (per-id patches with
//     "_remove_fields", or filter with set_fields/remove_fields;
//     {"matched_records"}), delete (exactly one of ids, filter, delete_all;
//     {"matched_records"}), fetch (ids, or filter with limit and
//     pagination_token; include_fields), list (prefix, limit,
//     pagination_token) and search (score_by dense_vector, sparse_vector and
//     text; top_k, filter, include_fields). Documents share the namespaces,
//     LSNs and DeleteDelay of vectors;
//   - errors: gRPC status codes, and REST {"code", "message", "details"} with
//     the matching HTTP status; the Api-Key header when Config.APIKey is set;
//     a request size limit (Config.MaxRequestBytes, default 2 MB);
//   - x-pinecone-request-lsn on writes and x-pinecone-max-indexed-lsn on
//     reads, and Config.DeleteDelay: deleted records stay visible to every
//     read for that long, and the max indexed LSN stays below the delete's
//     LSN until then, as Pinecone's deletes are eventually consistent;
//   - one LSN sequence per namespace, as Pinecone documents ("Writes to
//     one namespace do not increase the LSN for other namespaces", its
//     "Check data freshness" guide); reads of the whole index (stats, the
//     index's description) report the highest namespace's, which Pinecone
//     does not document;
//   - the index deleted and created again under its name (Recreate): no
//     records, and LSNs from the first again.
//
// Not emulated: the control plane (Config describes the one index), except
// DescribeIndex of that index (GET /indexes/{name}), which the Node SDK calls
// to find the host for upsertRecords even when it was given one, and
// ListIndexes (GET /indexes) listing it (control.go); integrated
// embedding (records written through /records have metadata only, no
// values; their search scores words), reranking, the documents search's query_string scoring and index schemas
// (any field is accepted), bulk imports, FetchByMetadata, sparse-only indexes, sparse scoring
// on cosine and euclidean indexes (refused), rate limits, and read units
// beyond a plausible count. Euclidean scores are squared distances, lowest
// first.
//
// Proven against go-pinecone v5.2.0 (gRPC cleartext and TLS, REST
// UpsertRecords over TLS), @pinecone-database/pinecone 5.1.2 (REST,
// cleartext and TLS), @pinecone-database/pinecone 9.0.0 (index.documents)
// and @langchain/pinecone 1.0.3 (PineconeStore) by this
// package's tests; the Node scripts live in test/integration/node.
package emulator
