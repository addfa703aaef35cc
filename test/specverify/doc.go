// Package specverify holds a fourth verifier of Lethe's certificates and
// signed reports, verify.py, written in Python from docs/certificate.md alone
// (no other verifier was read while writing it), and the test that runs it
// over every test vector of certificate/testdata/vectors: where it and the
// vectors disagree, either it or the spec is wrong.
package specverify
