package forgetopen

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/lethe-privacy/lethe/config"
	"github.com/lethe-privacy/lethe/config/ledgeropen"
	"github.com/lethe-privacy/lethe/engine"
	"github.com/lethe-privacy/lethe/ledger"
)

// Job is what a command that runs once over the stores (reconcile, sweep,
// replay) opens from a configuration: the ledger, bound to the subject
// salt, and the certifier that signs and logs its report.
type Job struct {
	Ledger *ledger.Handle
	// Hasher is nil when the job hashes no subject and no salt is set.
	Hasher *ledger.Hasher
	// Certifier is nil until Sign.
	Certifier *engine.Certifier
}

// JobNeeds says what a job opens.
type JobNeeds struct {
	// HashesSubjects requires the salt (ledgeropen.SubjectHasher); without
	// it the salt is optional, and a wrong one is still refused.
	HashesSubjects bool
	// RecordSalt records the salt in a ledger that holds none, for a job
	// that writes subject hashes.
	RecordSalt bool
	// LedgerLog is the ledger's logger; nil logs nothing of it.
	LedgerLog *slog.Logger
}

// OpenJob opens the ledger cfg names (beside configPath by default) under
// the salt from the environment. Its errors say what to set or fix.
func OpenJob(cfg *config.Config, configPath string, needs JobNeeds) (_ *Job, err error) {
	job := &Job{}
	if needs.HashesSubjects {
		job.Hasher, err = ledgeropen.SubjectHasher()
	} else {
		job.Hasher, err = ledgeropen.OptionalSubjectHasher()
	}
	if err != nil {
		return nil, err
	}
	l, where, err := ledgeropen.Open(cfg.Capture.Ledger, configPath, ledger.Options{Logger: needs.LedgerLog},
		ledgeropen.Salt{Hasher: job.Hasher, Record: needs.RecordSalt})
	if err != nil {
		return nil, fmt.Errorf("opening the ledger %s: %w", where, err)
	}
	job.Ledger = l
	return job, nil
}

// Sign builds the certifier of cfg's forget section over the ledger's
// transparency log (Certifier: the signing key is recorded in the log
// first), for a job that signs and logs its report. A job calls it once
// the stores are open, so that a run that cannot read them writes nothing
// to the log.
func (j *Job) Sign(ctx context.Context, cfg *config.Config, tool string, log *slog.Logger) (err error) {
	j.Certifier, _, err = Certifier(ctx, cfg, j.Ledger, tool, log)
	return err
}

// Close closes the ledger.
func (j *Job) Close() { j.Ledger.Close() }
