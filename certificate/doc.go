// Package certificate issues and verifies Lethe's deletion certificates,
// payload schemas lethe.certificate/v1 and v2 (v1 whose layers state what
// a page scan found in the store's pages), as specified in
// docs/certificate.md.
//
// A certificate is an envelope around exact payload bytes: the payload is
// JSON written once by Sign, Ed25519 (RFC 8032) signs those bytes, and
// verifiers check the bytes they were given instead of re-serialising JSON,
// so a verifier in any language agrees with this one. The envelope also
// carries the proof that the certificate was recorded in Lethe's
// transparency log: an RFC 6962 inclusion proof of the "forget.completed"
// event up to a C2SP tlog-checkpoint signed as a C2SP signed note
// (golang.org/x/mod/sumdb/note) with the same operator key.
//
// Verify returns one Verdict; only VerdictValid means the certificate is
// genuine, current, logged, and proves a complete erasure
// (VerdictIncomplete: genuine, but some layer was not verified empty);
// beside a valid v2 certificate, Result.Physical is the physical state of
// each layer's pages (PhysicalSummary), which never changes the verdict.
// VerifyReport checks the signed reports of sweeps and reconciles
// (lethe.report/v1) in the same envelope, and names why it refuses one
// with the same verdicts. VerifyWithAddenda verifies a certificate with
// its addenda beside it (the forget.physical and forget.replayed reports
// of its request): the verdict stays the certificate's, and the physical
// and replay lines beside it fold in the newest of them.
// Certificates, payloads and trusted keys files are read as the JSON and
// RFC 3339 subsets of the spec, the same way node/verify.mjs reads them;
// testdata/vectors holds the cases both must agree on. The deleted record ids are committed to by an
// RFC 6962 Merkle root (IDsRoot), so one deletion can be proven later
// (ProveID, CheckID) without listing the others, and the data subject can
// recognise their certificate with a secret only they hold (NewCommitment,
// CheckCommitment).
//
// Of Lethe's packages it imports only translog (checkpoints, canonical
// base64, bounded proof checks) and internal/strictjson, neither of which
// reaches a network or a database, so auditors can vendor the three.
package certificate
