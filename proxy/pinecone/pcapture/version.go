package pcapture

import "net/http"

// versionHeader names the API version a request is written for.
const versionHeader = "X-Pinecone-Api-Version"

// readVersions are the API versions whose write shapes extract reads: the
// vector upsert, update and delete bodies and the records upsert are the
// same in each (2025-10 adds an update's filter and dryRun, which extract
// reads; 2026-07 leaves them as they were, as the generated client of
// @pinecone-database/pinecone 9.0.0 shows). go-pinecone v5 sends 2025-10,
// the Node SDK 5.x 2025-01 and 9.x 2026-07. A request without the header
// gets Pinecone's default version, one of these. A later version may
// change a write's shape, so a write naming any other is unknown (see
// classify).
var readVersions = map[string]bool{
	"2024-07": true,
	"2024-10": true,
	"2025-01": true,
	"2025-04": true,
	"2025-10": true,
	"2026-07": true,
}

// documentsVersion reports whether extract reads a documents write of the
// API version shown: 2026-07, the version that brought document indexes,
// or no header (the body is then read as 2026-07's). An earlier version
// has no documents paths, so a documents write naming one is unknown.
func documentsVersion(shown string) bool {
	return shown == "2026-07" || shown == "none"
}

// apiVersion returns r's API version as a message may show it (see
// shownVersion) and whether extract reads its writes. Several values are
// unknown: which one the index honours is its own affair.
func apiVersion(r *http.Request) (shown string, read bool) {
	values := r.Header.Values(versionHeader)
	switch len(values) {
	case 0:
		return "none", true
	case 1:
		return shownVersion(values[0]), readVersions[values[0]]
	}
	return "several values", false
}

// shownVersion is v as a message or log may show it: a version's own
// shape (digits and '-', as 2025-10, or a short word such as unstable),
// else a placeholder, since the header is the client's to fill.
func shownVersion(v string) string {
	if v == "" || len(v) > 20 {
		return "(unreadable)"
	}
	for _, c := range []byte(v) {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c == '-') {
			return "(unreadable)"
		}
	}
	return v
}
