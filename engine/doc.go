// Package engine runs the forget lifecycle: preview what a subject's
// erasure would delete and hand out a single-use confirm token bound to
// those counts; journal the request durably (with its one-month deadline,
// GDPR Art. 12(3)) and tombstone the subject; delete the subject's rows in
// every configured store by ledger ids and by the subject predicate;
// verify absence by querying again; sign a certificate and append it to the
// transparency log. Subjects are compared as exact bytes: a preview that
// finds nothing counts near misses (other spellings of the subject, counts
// only), and its forget must be confirmed as finding nothing, which its
// certificate then says. Every step is journaled before the next, so a forget
// interrupted by a crash resumes where it stopped, and a request is
// certified once: the signed payload is journaled before it is logged, and
// a resumed request reuses it.
//
// The raw subject is needed to run the subject predicates, including after
// a crash, so an open request keeps it sealed (AES-256-GCM, key derived
// from the subject salt) in the journal; it is erased when the request
// finishes. Nothing else of the subject but its HMAC is stored.
//
// The operations beside forget live in packages of their own under this
// folder: reconcile (the stores compared with the ledger) and retention
// (sweeps of records past their retain), which signs through this
// package's Certifier. Neither is imported here.
package engine
