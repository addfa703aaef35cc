package walfollow

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// LegacyName is the slot name every proxy used by default before the
// default was derived from the database (DefaultName).
const LegacyName = "lethe"

// DefaultName is the slot name for the configured tables of database
// when the config names none: "lethe_" and the database's name, so that
// proxies of different databases on one server (slots are server-wide)
// do not share a slot. Characters a slot name cannot hold become "_";
// when that, or shortening a long name, loses anything, a short hash of
// the database's name keeps different databases apart. The result is a
// valid name (ValidName), the same for the same database.
func DefaultName(database string) string {
	if database == "" {
		return LegacyName
	}
	var b strings.Builder
	for _, r := range database {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	name := LegacyName + "_" + b.String()
	if b.String() == database && len(name) <= maxNameLen {
		return name
	}
	sum := sha256.Sum256([]byte(database))
	suffix := "_" + hex.EncodeToString(sum[:4])
	if len(name) > maxNameLen-len(suffix) {
		name = name[:maxNameLen-len(suffix)]
	}
	return name + suffix
}

// maxNameLen is the longest slot name ValidName takes: PostgreSQL's 63
// bytes, less room for the publication's "_inserts".
const maxNameLen = 50
