// Package coverage judges whether every place the application keeps
// vectors or people's data has a rule: each table with a vector, halfvec
// or sparsevec column or a column named like a subject (user_id, email…),
// and each namespace of a configured Pinecone index, must have a capture
// rule or an ignore with a reason. It also finds rules that no longer
// match the database: a configured table that does not exist yet (a
// warning: applications such as LangChain.js create theirs on first use)
// and a configured column that does not exist (an error).
//
// The package does no I/O. Connectors read the facts (proxy/pgwire/pgstore
// reads the catalog into Tables, proxy/pinecone/pcstore lists an index's
// namespaces), the caller turns its configuration into a Policy, and
// Check returns the Findings, which Write prints as text, GitHub workflow
// annotations or JSON. lethe-proxy check and the proxy (coverage.mode)
// share it. See docs/coverage.md.
package coverage
