package ledgeropen

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/lethe-privacy/lethe/config"
	"github.com/lethe-privacy/lethe/ledger"
)

// DefaultFile is the embedded ledger's file name, beside the
// configuration file when capture.ledger names no ledger.
const DefaultFile = "lethe-ledger.db"

// Salt is what opening the ledger does with the subject salt
// (ledger.SaltKeeper): a ledger's subject hashes and tombstones match only
// under the salt they were made with, so a command that hashes subjects
// is refused a ledger written with another salt.
type Salt struct {
	// Hasher is the salt; nil for a command that hashes no subject and was
	// given no salt: nothing is checked or recorded.
	Hasher *ledger.Hasher
	// Record is for commands that write subject hashes (serve, reconcile
	// --adopt): the salt's fingerprint is recorded when the ledger holds
	// none. Other commands only compare, so that a salt given to a reading
	// command never becomes the ledger's.
	Record bool
}

// Open opens the ledger store names and checks salt against it; it
// returns where the ledger is (a file path, or the PostgreSQL server and
// database without credentials), for messages, also on error.
// configPath places the default SQLite file.
func Open(store config.LedgerStore, configPath string, opts ledger.Options, salt Salt) (*ledger.Handle, string, error) {
	at := Location(store, configPath)
	l, err := ledger.Open(context.Background(), at, opts)
	if err != nil {
		return nil, at.String(), err
	}
	if err := checkSalt(l, at.String(), salt, opts.Logger); err != nil {
		l.Close()
		return nil, at.String(), err
	}
	return l, at.String(), nil
}

// Location is the ledger store names: capture.ledger.postgres, or the
// SQLite file capture.ledger.sqlite names (default: DefaultFile beside the
// configuration file).
func Location(store config.LedgerStore, configPath string) ledger.Location {
	if store.Postgres != "" {
		return ledger.Location{Postgres: store.Postgres}
	}
	if store.SQLite == "" {
		return ledger.Location{SQLite: filepath.Join(filepath.Dir(configPath), DefaultFile)}
	}
	return ledger.Location{SQLite: store.SQLite}
}

// checkSalt compares salt with the fingerprint the ledger at where holds,
// and records it when salt.Record and the ledger holds none.
func checkSalt(k ledger.SaltKeeper, where string, salt Salt, log *slog.Logger) error {
	if salt.Hasher == nil {
		return nil
	}
	if log == nil {
		log = slog.Default()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	check := k.CheckSalt
	if salt.Record {
		check = k.RecordSalt
	}
	found, err := check(ctx, salt.Hasher)
	if errors.Is(err, ledger.ErrSaltMismatch) {
		return fmt.Errorf("the ledger %s was written with another subject salt than the one in %s: %w. "+
			"Its subject hashes and tombstones match only under its own salt, so forgotten people could be written again unnoticed. "+
			"Point %s (or %s) at the salt this ledger was written with; or, to start afresh, point capture.ledger at a new ledger "+
			"(the old one keeps its records and tombstones, readable only with its salt). Never replace the salt under a ledger",
			where, saltSource(), err, EnvSaltFile, EnvSalt)
	}
	if err != nil {
		return fmt.Errorf("the ledger %s: checking the subject salt: %w", where, err)
	}
	switch found {
	case ledger.SaltRecorded:
		log.Info("the ledger is bound to this subject salt from now on (its fingerprint is recorded, never the salt)", "ledger", where)
	case ledger.SaltRecordedOnExisting:
		log.Warn("the ledger holds records from a release that kept no subject salt fingerprint: this salt's is recorded now, and any other salt is refused from now on. "+
			"If they were written with another salt, stop now (docs/capture.md, The subject salt)", "ledger", where)
	}
	return nil
}
