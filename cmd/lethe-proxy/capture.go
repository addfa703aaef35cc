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

	"github.com/lethe-privacy/lethe/capture"
	"github.com/lethe-privacy/lethe/config"
	"github.com/lethe-privacy/lethe/extract"
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

// newCapture builds the capture observer when tables are configured; it
// returns nil (a pure relay) when none are.
func newCapture(cfg *config.Config, configPath string, log *slog.Logger) (*capture.Capture, ledger.Ledger, error) {
	if len(cfg.Capture.Tables) == 0 {
		return nil, nil, nil
	}
	rules, err := compileRules(cfg.Capture.Tables)
	if err != nil {
		return nil, nil, err
	}
	salt, err := loadSalt()
	if err != nil {
		return nil, nil, err
	}
	hasher, err := ledger.NewHasher(salt)
	if err != nil {
		return nil, nil, fmt.Errorf("%w (from %s or %s)", err, envSalt, envSaltFile)
	}
	l, where, err := openLedger(cfg.Capture.Ledger, configPath)
	if err != nil {
		return nil, nil, err
	}
	log.Info("capture enabled", "tables", len(cfg.Capture.Tables), "mode", cfg.Capture.Mode, "ledger", where)
	c := capture.New(capture.Config{
		Rules: rules, Ledger: l, Hasher: hasher,
		Mode: capture.Mode(cfg.Capture.Mode), FailOpen: cfg.Capture.FailOpen, Logger: log,
	})
	return c, l, nil
}

func compileRules(tables []config.TableRule) (*extract.Rules, error) {
	var rules []extract.Rule
	for _, t := range tables {
		r := extract.Rule{Table: t.Table, ID: t.ID}
		for _, expr := range t.Subjects {
			s, err := extract.ParseSubject(expr)
			if err != nil {
				return nil, fmt.Errorf("capture.tables %s: subject %q: %w", t.Table, expr, err)
			}
			r.Subjects = append(r.Subjects, s)
		}
		rules = append(rules, r)
	}
	return extract.NewRules(rules)
}

func loadSalt() ([]byte, error) {
	if v := os.Getenv(envSalt); v != "" {
		salt, err := hex.DecodeString(strings.TrimSpace(v))
		if err != nil {
			return nil, fmt.Errorf("%s is not hex: %w", envSalt, err)
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
	return nil, errors.New("capture is configured but no subject salt is set: create one with " +
		"`head -c 32 /dev/urandom > /etc/lethe/salt && chmod 600 /etc/lethe/salt` and set " +
		envSaltFile + "=/etc/lethe/salt (or " + envSalt + " to 64 hex digits); keep it secret and never change it, or earlier tags stop matching")
}

func openLedger(s config.LedgerStore, configPath string) (ledger.Ledger, string, error) {
	if s.Postgres != "" {
		l, err := ledger.OpenPostgres(context.Background(), s.Postgres, ledger.Options{})
		return l, "postgres", err
	}
	path := s.SQLite
	if path == "" {
		path = filepath.Join(filepath.Dir(configPath), defaultLedgerFile)
	}
	l, err := ledger.OpenSQLite(path, ledger.Options{})
	return l, path, err
}
