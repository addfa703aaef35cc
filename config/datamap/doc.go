// Package datamap renders the data map: for a privacy officer, what each
// table and Pinecone namespace Lethe protects holds, which field names the
// person, what forget does there and how it verifies absence, how long
// records are kept, and which tables are deliberately left out. It is built
// from the configuration alone, with no I/O, so the same configuration
// always gives the same bytes and CI can check a committed copy
// (lethe-proxy export --check).
//
// What forget does is taken from the connectors' own plans
// (pgvector.PlanFor, pinecone.PlanFor), built by the functions forget runs,
// so the map cannot drift from it. Nothing that reaches a store is
// rendered: no connection string, host, key file, salt or API key variable.
//
// Two renderings: Markdown for people, and JSON for tools (schema
// lethe.datamap/v1, documented in docs/export.md).
package datamap
