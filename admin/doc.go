// Package admin is Lethe's HTTP admin API: preview and confirm a forget,
// follow it, fetch its certificate, lift a tombstone, verify a
// certificate, and read the transparency log (checkpoint, inclusion and
// consistency proofs), plus /healthz, /readyz, a Prometheus /metrics and,
// without a token, /verify: the certificate verifier in the browser
// (certificate/webverify), a static page that holds no data; and at
// /console the privacy officer's console (admin/console), HTML pages over
// the same engine and tokens, signed in with a session cookie.
// docs/openapi.yaml is the API's contract; a test keeps the two in step.
//
// The package holds no forget logic: every call goes to an Engine, and
// admin only decodes requests, checks who may make them, and maps the
// engine's errors to HTTP statuses with a message that says what to do.
//
// Callers authenticate with a bearer token (RFC 6750). The tokens file
// keeps only their SHA-256, and a presented token is hashed and compared
// in constant time against every entry. A token has a role: operators may
// do everything, auditors may read, verify and follow the log but not
// preview, forget or lift.
//
// Subjects are personal data, never at rest or in logs: they travel only in
// request bodies, never in paths or query strings, and the access log
// records the route pattern, never the URL or a body.
package admin
