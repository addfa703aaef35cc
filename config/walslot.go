package config

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
)

// LegacySlotName is the slot name every proxy used by default before the
// default was derived from the database (DefaultSlotName).
const LegacySlotName = "lethe"

// DefaultSlotName is the slot name for the configured tables of database
// when the config names none: "lethe_" and the database's name, so that
// proxies of different databases on one server (slots are server-wide)
// do not share a slot. Characters a slot name cannot hold become "_";
// when that, or shortening a long name, loses anything, a short hash of
// the database's name keeps different databases apart. The result is a
// valid name (ValidSlotName), the same for the same database.
func DefaultSlotName(database string) string {
	if database == "" {
		return LegacySlotName
	}
	var b strings.Builder
	for _, r := range database {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	name := LegacySlotName + "_" + b.String()
	if b.String() == database && len(name) <= maxSlotNameLen {
		return name
	}
	sum := sha256.Sum256([]byte(database))
	suffix := "_" + hex.EncodeToString(sum[:4])
	if len(name) > maxSlotNameLen-len(suffix) {
		name = name[:maxSlotNameLen-len(suffix)]
	}
	return name + suffix
}

// maxSlotNameLen is the longest slot name ValidSlotName takes: PostgreSQL's 63
// bytes, less room for the publication's "_inserts".
const maxSlotNameLen = 50

// validSlotName is what a slot name may be (PostgreSQL's rule, shorter).
var validSlotName = regexp.MustCompile(`^[a-z0-9_]{1,50}$`)

// ValidSlotName reports whether name can name the slot and the publications.
func ValidSlotName(name string) error {
	if !validSlotName.MatchString(name) || len(name) > maxSlotNameLen {
		return fmt.Errorf("%q cannot name a replication slot (use 1 to 50 of a-z, 0-9, _)", name)
	}
	return nil
}
