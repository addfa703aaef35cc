// Package offline is what an operator or an auditor does with Lethe's
// evidence files, without a server: verify a deletion certificate or a
// signed report against a trusted keys file and print its verdict (named
// as node/verify.mjs names it), make the operator's signing key and the
// trusted keys file that publishes it, and write signed files so that no
// reader ever sees half of one.
//
// It imports certificate and translog, nothing of the proxy.
package offline
