package config

import (
	"fmt"
	"time"

	"gopkg.in/yaml.v3"
)

// CopyRetention is how long the copies of a PostgreSQL store's data that
// forget cannot reach are kept, as the operator declares it
// (postgres.retention): what each certificate's horizon dates them from.
// An undeclared period is stated as unknown, never guessed.
type CopyRetention struct {
	// WALArchive is how long archived WAL segments are kept (the
	// archive_command's or the backup tool's retention).
	WALArchive Kept `yaml:"wal_archive"`
	// Backups is how long base backups and snapshots are kept.
	Backups Kept `yaml:"backups"`
}

// PineconeRetention is how long an index's backups are kept
// (pinecone.indexes[].retention).
type PineconeRetention struct {
	Backups Kept `yaml:"backups"`
}

// Kept is a declared retention period: a duration ("35d", "720h"), or
// "none" when no such copy is kept at all. The zero Kept is undeclared.
type Kept struct {
	Declared bool
	None     bool          // declared "none": no such copies are kept
	Period   time.Duration // when declared and not None, more than zero
}

func (k *Kept) UnmarshalYAML(n *yaml.Node) error {
	if n.Value == "none" {
		*k = Kept{Declared: true, None: true}
		return nil
	}
	var d Duration
	if err := d.UnmarshalYAML(n); err != nil {
		return fmt.Errorf("%w, or none when no such copy is kept", err)
	}
	if d <= 0 {
		return fmt.Errorf("line %d: a retention of %q keeps nothing: write none when no such copy is kept, or how long copies are kept (e.g. 35d)", n.Line, n.Value)
	}
	*k = Kept{Declared: true, Period: d.D()}
	return nil
}
