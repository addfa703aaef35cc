package certificate

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// SchemaV3 is a v2 payload with one member more, horizon: for every kind
// of copy of the deleted records forget cannot reach (the WAL, its
// archives, backups, replicas, the provider's purge), when the last one is
// expected to be gone. Sign writes v3 exactly when the payload has a
// horizon; v1 and v2 certificates stay as they were.
const SchemaV3 = "lethe.certificate/v3"

// Horizon is one kind of copy of a store's data that a delete does not
// remove at once, and when the last copy holding the deleted records is
// expected to be gone: a date, a condition, or unknown with the reason.
// Nothing in it is guessed: what cannot be known is said to be unknown.
type Horizon struct {
	Store string `json:"store"` // "postgres" or "pinecone", a store of the scope
	// Copy is the kind of copy: HorizonPGWAL, HorizonWALArchive,
	// HorizonBackups, HorizonReplicas or HorizonProviderPurge.
	Copy string `json:"copy"`
	// Status is HorizonDated, HorizonConditional or HorizonUnknown.
	Status string `json:"status"`
	// Until is, when Status is HorizonDated, the time (RFC 3339, UTC) by
	// which the last copy is expected to be gone; "" otherwise.
	Until string `json:"until"`
	// Basis says what the date was computed from, the condition the copy
	// waits for, or why it is unknown (with what would make it known).
	Basis string `json:"basis"`
}

// The values of Horizon.Status.
const (
	HorizonDated       = "dated"       // Until says when
	HorizonConditional = "conditional" // gone once the condition in Basis holds; no date can be known
	HorizonUnknown     = "unknown"     // Basis says why
)

// The values of Horizon.Copy.
const (
	HorizonPGWAL         = "pg_wal"         // PostgreSQL's write-ahead log segments on the server
	HorizonWALArchive    = "wal_archive"    // archived WAL segments (archive_command, backup tools)
	HorizonBackups       = "backups"        // base backups, snapshots, Pinecone backups
	HorizonReplicas      = "replicas"       // standbys replaying the WAL
	HorizonProviderPurge = "provider_purge" // the provider's own retention of deleted data (Pinecone)
)

// horizonCopies says which stores each kind of copy belongs to.
var horizonCopies = map[string][]string{
	HorizonPGWAL:         {StorePostgres},
	HorizonWALArchive:    {StorePostgres},
	HorizonBackups:       {StorePostgres, StorePinecone},
	HorizonReplicas:      {StorePostgres},
	HorizonProviderPurge: {StorePinecone},
}

// HorizonAt is the Until of a dated horizon at t, as payloads write it.
func HorizonAt(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// HorizonExcludes is claim.excludes of a v3 certificate: what its horizon
// does not speak for. The WAL, archives, backups and replicas are dated
// (or stated unknown) in the horizon instead of excluded.
func HorizonExcludes() []string {
	return []string{
		"model weights trained or fine-tuned on the data",
		"derived copies outside the scope (caches, exports, logs, other tables or stores)",
	}
}

// checkHorizon is the part of check 15 that concerns a v3 payload's
// horizon: every entry a known kind of copy of a store in scope, a date
// exactly when dated, and a basis. It returns why not, or "".
func checkHorizon(p *Payload, scope map[Scope]bool) string {
	if p.Schema != SchemaV3 {
		return ""
	}
	if len(p.Horizon) == 0 {
		return "schema " + SchemaV3 + " with an empty horizon: a v3 certificate states at least one"
	}
	stores := map[string]bool{}
	for s := range scope {
		stores[s.Store] = true
	}
	for i, h := range p.Horizon {
		at := fmt.Sprintf("horizon[%d]", i)
		owners, known := horizonCopies[h.Copy]
		switch {
		case !known:
			return fmt.Sprintf("%s.copy %q is not pg_wal, wal_archive, backups, replicas or provider_purge", at, h.Copy)
		case !IsStore(h.Store):
			return fmt.Sprintf("%s.store %q is not %q or %q", at, h.Store, StorePostgres, StorePinecone)
		case !slices.Contains(owners, h.Store):
			return fmt.Sprintf("%s: a %s store has no %s", at, h.Store, h.Copy)
		case !stores[h.Store]:
			return fmt.Sprintf("%s.store %s has no layer in scope", at, h.Store)
		case h.Basis == "":
			return at + ".basis is empty: say what the horizon was computed from, or why it is unknown"
		}
		switch h.Status {
		case HorizonDated:
			if _, err := ParseTime(h.Until); err != nil {
				return fmt.Sprintf("%s.until: %v", at, err)
			}
		case HorizonConditional, HorizonUnknown:
			if h.Until != "" {
				return fmt.Sprintf("%s: status %s, but until is %q: only a dated horizon has a date", at, h.Status, h.Until)
			}
		default:
			return fmt.Sprintf("%s.status %q is not dated, conditional or unknown", at, h.Status)
		}
	}
	return ""
}

// state is the horizon of one kind of copy in a few words, as every
// verifier prints it (docs/certificate.md, "Erasure horizon").
func (h Horizon) state() string {
	switch h.Status {
	case HorizonDated:
		return "until " + h.Until
	case HorizonConditional:
		return "until a condition holds"
	}
	return "unknown"
}

// HorizonSummary is the horizon line of a v3 payload, "<store> <copy>:
// <state>" per entry joined by "; ", as every verifier prints it beside a
// valid verdict; "" for a v1 or v2 payload, which states none.
func HorizonSummary(p *Payload) string {
	if p == nil || p.Schema != SchemaV3 {
		return ""
	}
	parts := make([]string, len(p.Horizon))
	for i, h := range p.Horizon {
		parts[i] = h.Store + " " + h.Copy + ": " + h.state()
	}
	return strings.Join(parts, "; ")
}
