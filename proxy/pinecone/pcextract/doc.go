// Package pcextract is the Pinecone wing's body grammar: pure functions
// from one write request's body to extract.Tags.
//
// Rules (rules.go) is built from an index's namespaces and the metadata
// fields that hold subjects; tags name the record as "<index>/<namespace>"
// (extract.CanonicalNamespace) and its id. One method per write and
// transport takes the whole request body the relay captured: UpsertREST,
// UpdateREST, DeleteREST and UpsertRecordsREST (NDJSON) in rest.go and
// records.go; UpsertDocumentsREST, UpdateDocumentsREST and
// DeleteDocumentsREST (API version 2026-07, the namespace from the path,
// subjects at a document's top level) in documents.go; UpsertGRPC
// (grpc_upsert.go), UpdateGRPC and DeleteGRPC (grpc.go) take one protobuf
// message, unframed, with metadata Structs read in struct.go and the
// messages' wire types checked against the schemas of wire.go (in the same
// walk that reads an upsert's vectors). JSON bodies are checked by
// internal/strictjson first (jsoncheck.go) and then walked, not decoded, so
// vector values are never parsed. Updates by metadata filter that set a
// subject field and bulk imports are unattributed; deletes other than by id
// yield nothing.
package pcextract
