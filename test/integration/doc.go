// Package integration holds end-to-end tests that run real PostgreSQL (with
// pgvector) and real client libraries through lethe-proxy. They need the
// throwaway cluster from scripts/testdb.sh and run with the "integration"
// build tag; scripts/test.sh sets everything up and runs them.
package integration
