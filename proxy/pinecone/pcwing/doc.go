// Package pcwing is the Pinecone wing: everything of the proxy that is
// Pinecone's, built by New from the compiled configuration and the capture
// core, behind connector.Wing.
//
// The wing owns the relay (proxy/pinecone) and its listener, builds the
// capture adapter (proxy/pinecone/pcapture) the relay calls, and opens the
// store connector (proxy/pinecone/pcstore) on each index host for forget,
// reconcile, retention sweeps and the coverage check. Those connections go
// to the index host itself, never through the relay, with the API key read
// from the index's api_key_env variable: the relay forwards the
// application's own key and keeps none. With a capture core it also
// settles the ledger after the application's deletes by metadata filter
// (settle.go), whose records only the index knows.
package pcwing
