package main

import (
	"github.com/lethe-privacy/lethe/config"
	"github.com/lethe-privacy/lethe/config/ledgeropen"
	"github.com/lethe-privacy/lethe/ledger"
)

// The names the subcommands open the ledger by; config/ledgeropen does it.
const (
	envSalt     = ledgeropen.EnvSalt
	envSaltFile = ledgeropen.EnvSaltFile
)

type ledgerSalt struct {
	hasher *ledger.Hasher
	record bool
}

var (
	subjectHasher         = ledgeropen.SubjectHasher
	optionalSubjectHasher = ledgeropen.OptionalSubjectHasher
)

func openLedger(s config.LedgerStore, configPath string, salt ledgerSalt) (*ledger.Handle, string, error) {
	return openLedgerWith(s, configPath, ledger.Options{}, salt)
}

func openLedgerWith(s config.LedgerStore, configPath string, opts ledger.Options, salt ledgerSalt) (*ledger.Handle, string, error) {
	return ledgeropen.Open(s, configPath, opts, ledgeropen.Salt{Hasher: salt.hasher, Record: salt.record})
}
