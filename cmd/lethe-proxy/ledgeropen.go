package main

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/lethe-privacy/lethe/config"
	"github.com/lethe-privacy/lethe/ledger"
)

// Environment variables that carry the subject salt: never the YAML file,
// so that the config can be shared and committed without the secret.
const (
	envSalt     = "LETHE_SUBJECT_SALT"      // hex, at least 32 bytes
	envSaltFile = "LETHE_SUBJECT_SALT_FILE" // a file holding at least 32 bytes
)

// defaultLedgerFile is the embedded ledger beside the config file.
const defaultLedgerFile = "lethe-ledger.db"

// ledgerSalt is what opening the ledger does with the subject salt
// (ledger.SaltKeeper): a ledger's subject hashes and tombstones match only
// under the salt they were made with, so a command that hashes subjects
// is refused a ledger written with another salt.
type ledgerSalt struct {
	// hasher is the salt; nil for a command that hashes no subject and was
	// given no salt: nothing is checked or recorded.
	hasher *ledger.Hasher
	// record is for commands that write subject hashes (serve, reconcile
	// --adopt): the salt's fingerprint is recorded when the ledger holds
	// none. Other commands only compare, so that a salt given to a reading
	// command never becomes the ledger's.
	record bool
}

// subjectHasher is the hasher of the salt in the environment, which the
// command needs.
func subjectHasher() (*ledger.Hasher, error) {
	salt, err := loadSalt()
	if err != nil {
		return nil, err
	}
	h, err := ledger.NewHasher(salt)
	if err != nil {
		return nil, fmt.Errorf("%w (from %s)", err, saltSource())
	}
	return h, nil
}

// optionalSubjectHasher is subjectHasher for commands that hash no subject
// (sweep, ledger counts): nil when no salt is set, so that they run
// without one and are refused a wrong one.
func optionalSubjectHasher() (*ledger.Hasher, error) {
	if os.Getenv(envSalt) == "" && os.Getenv(envSaltFile) == "" {
		return nil, nil
	}
	return subjectHasher()
}

func loadSalt() ([]byte, error) {
	if v := os.Getenv(envSalt); v != "" {
		salt, err := hex.DecodeString(strings.TrimSpace(v))
		if err != nil {
			// Not err: hex's message quotes the offending character of the secret.
			return nil, fmt.Errorf("%s is not hex digits (%d characters); give 64 hex digits, or the salt's file in %s", envSalt, len(strings.TrimSpace(v)), envSaltFile)
		}
		return salt, nil
	}
	if f := os.Getenv(envSaltFile); f != "" {
		salt, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", envSaltFile, err)
		}
		return salt, nil
	}
	return nil, errors.New("capture is configured but no subject salt is set: create one once with " +
		"`[ -f /etc/lethe/salt ] || (umask 077 && head -c 32 /dev/urandom > /etc/lethe/salt)` and set " +
		envSaltFile + "=/etc/lethe/salt (or " + envSalt + " to 64 hex digits); keep it secret and never change it: " +
		"the ledger is bound to it, and refuses another")
}

// saltSource names where the salt was read from, for messages: the file's
// path, never the salt.
func saltSource() string {
	if os.Getenv(envSalt) != "" {
		return envSalt
	}
	return envSaltFile + "=" + os.Getenv(envSaltFile)
}

func openLedger(s config.LedgerStore, configPath string, salt ledgerSalt) (*ledger.Handle, string, error) {
	return openLedgerWith(s, configPath, ledger.Options{}, salt)
}

// openLedgerWith opens the ledger s names and checks salt against it; it
// returns where the ledger is (a file path, or the PostgreSQL server and
// database without credentials), for messages.
func openLedgerWith(s config.LedgerStore, configPath string, opts ledger.Options, salt ledgerSalt) (*ledger.Handle, string, error) {
	at := ledgerLocation(s, configPath)
	l, err := ledger.Open(context.Background(), at, opts)
	if err != nil {
		return nil, at.String(), err
	}
	if err := checkLedgerSalt(l, at.String(), salt, opts.Logger); err != nil {
		l.Close()
		return nil, at.String(), err
	}
	return l, at.String(), nil
}

// ledgerLocation is the ledger s names: capture.ledger.postgres, or the
// SQLite file capture.ledger.sqlite names (default: beside the config).
func ledgerLocation(s config.LedgerStore, configPath string) ledger.Location {
	if s.Postgres != "" {
		return ledger.Location{Postgres: s.Postgres}
	}
	if s.SQLite == "" {
		return ledger.Location{SQLite: filepath.Join(filepath.Dir(configPath), defaultLedgerFile)}
	}
	return ledger.Location{SQLite: s.SQLite}
}

// checkLedgerSalt compares salt with the fingerprint the ledger at where
// holds, and records it when salt.record and the ledger holds none.
func checkLedgerSalt(k ledger.SaltKeeper, where string, salt ledgerSalt, log *slog.Logger) error {
	if salt.hasher == nil {
		return nil
	}
	if log == nil {
		log = slog.Default()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	check := k.CheckSalt
	if salt.record {
		check = k.RecordSalt
	}
	found, err := check(ctx, salt.hasher)
	if errors.Is(err, ledger.ErrSaltMismatch) {
		return fmt.Errorf("the ledger %s was written with another subject salt than the one in %s: %w. "+
			"Its subject hashes and tombstones match only under its own salt, so forgotten people could be written again unnoticed. "+
			"Point %s (or %s) at the salt this ledger was written with; or, to start afresh, point capture.ledger at a new ledger "+
			"(the old one keeps its records and tombstones, readable only with its salt). Never replace the salt under a ledger",
			where, saltSource(), err, envSaltFile, envSalt)
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
