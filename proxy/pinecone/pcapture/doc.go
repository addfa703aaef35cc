// Package pcapture is the Pinecone relay's capture adapter: a
// pinecone.Hook that turns each write request into extract tags, makes
// them a durable write-ahead intent through the capture core before the
// relay forwards the request, and settles the intent by the upstream's
// answer. It follows the contract in package capture's doc; what is
// particular to Pinecone:
//
// Which requests are writes (the path as sent, before any cleaning):
//
//	REST  /vectors/upsert, /vectors/update, /vectors/delete (any method)
//	      /records/namespaces/{namespace}/upsert (NDJSON)
//	      /namespaces/{namespace}/documents/{upsert,update,delete} (any
//	      method; API version 2026-07, or no header)
//	      POST /bulk/imports
//	gRPC  /VectorService/Upsert, /VectorService/Update, /VectorService/Delete
//
// A namespace delete (REST DELETE /namespaces/{namespace}, gRPC
// /VectorService/DeleteNamespace) adds no personal data and is never
// refused for its API version; once the store answers success every
// record of the namespace is marked deleted, as for deleteAll. A gRPC
// DeleteNamespaceRequest that cannot be read is refused, since which
// namespace it empties would be unknown.
//
// Classification is an allow-list. Besides these writes, the requests
// that pass untouched are the data plane's reads and the operations that
// add no personal data (routes.go: fetch, list, query, stats, records
// search, the documents fetch, list and search, namespaces, bulk import
// status and cancel, the control plane's
// index descriptions; the matching gRPC methods).
//
// What each delete does to the ledger once the store answers success:
//
//	by ids                     those ids marked deleted
//	deleteAll (REST), delete_all (gRPC, documents), namespace delete
//	                           every record of the namespace marked deleted
//	by filter (vectors REST, gRPC, documents)
//	                           nothing here: which records it matched only
//	                           the store knows, so the delete is reported to
//	                           OnFilterDelete's function (the wing's
//	                           settler, which reads the store and marks
//	                           deleted the records gone from it)
//
// A delete by filter adds no personal data and needs no intent; one the
// store refused, or whose outcome is unknown, is not reported.
//
// Refused in every mode (LT004, INVALID_ARGUMENT): a path starting with
// "//", which an upstream resolving the request-target as a URL reads as
// another host; a path that only cleaning, case or a trailing slash would
// turn into a write path; a gRPC write method called other than as gRPC
// over HTTP/2 (gRPC-Web, HTTP/1.1). So an upstream or gateway that
// normalises paths or bridges protocols cannot be handed a write Lethe
// did not read. Paths are never cleaned: the Node SDK's
// /records/namespaces//upsert is the default namespace's records upsert.
//
// Anything else is unknown: a path and method that is neither, or a write
// whose X-Pinecone-Api-Version is not one whose shapes extract reads
// (version.go; no header is Pinecone's default, which it reads). In strict
// mode it is refused (LT004) with a message naming the path's pattern
// (its values hidden) and the version; in permissive mode it is forwarded
// and recorded as one unattributed write of "<index>/*" for reconcile.
//
// Outcomes: an intent is confirmed on a 2xx answer (REST) or grpc-status 0
// (gRPC, read from the trailers as the response streams to the client);
// dropped when the upstream certainly did not apply the write (REST 4xx
// but 408; gRPC INVALID_ARGUMENT, NOT_FOUND, ALREADY_EXISTS,
// PERMISSION_DENIED, RESOURCE_EXHAUSTED, FAILED_PRECONDITION,
// OUT_OF_RANGE, UNIMPLEMENTED, UNAUTHENTICATED; a connection that could
// not be dialled); and left pending otherwise (5xx, 408, other gRPC codes,
// an exchange broken mid-way, a client gone before the status arrived),
// since the write may have been applied: forget treats a pending intent
// as a candidate.
//
// A documents write naming an API version before 2026-07, which has no
// documents paths, is unknown too.
//
// An update by id whose setMetadata (or, for a document, whose patch)
// sets the subject field of a namespace
// with one subject field moves the record: once it succeeds, the subjects
// earlier writes recorded for it are marked deleted and it stays recorded
// under its new subject only (capture.ConfirmMoved). With several subject
// fields an update may set some and keep the others, whose values the
// proxy never saw, so the new subjects are added and the old ones kept;
// forget checks each record's metadata before deleting it, so a record is
// never deleted for a subject it no longer names.
//
// Refusals take Pinecone's shapes (see capture's doc for the mapping):
// the message starts with the LT code. Bodies that cannot be read — not
// JSON, invalid protobuf, a compressed or multi-message gRPC body, a field
// of the wrong type — are refused with INVALID_ARGUMENT naming the field
// and position, never a value; nothing is forwarded, and the connection
// stays usable.
package pcapture
