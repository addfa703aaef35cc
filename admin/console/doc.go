// Package console is the privacy officer's console: server-rendered pages
// on the admin listener (mounted at /console by package admin) to list
// forget requests with their deadlines, preview and confirm a forget,
// follow its progress per layer, read and download its certificate, and
// check that the transparency log only grew since this browser last
// looked, and see which tables and namespaces have no capture rule (the
// API's coverage survey) (docs/console.md).
//
// It holds no forget logic and no tokens of its own: every call goes to
// the engine the admin API uses, through the same interface, and a session
// is opened with an operator's or an auditor's admin API token, which is
// checked again at each request, so that a token removed from the tokens
// file ends its sessions at once. Roles are the API's: an auditor reads,
// an operator also previews and confirms.
//
// Security: the session lives in an HttpOnly, SameSite=Strict cookie
// (Secure when the request came over TLS) holding a random id; the token
// itself is only ever in the login form's POST body. Every POST must come
// from this origin (Origin header) and carry the session's CSRF token.
// Subjects are personal data: they travel in POST bodies only, pages that
// show a request name it by its id, pages are never cached, and nothing
// here logs a subject (the access log records route patterns). Pages use
// html/template, one embedded stylesheet and one embedded script under a
// content security policy that allows nothing else: no build step, no CDN.
package console
