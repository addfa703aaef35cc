package forgetopen

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/lethe-privacy/lethe/config"
	"github.com/lethe-privacy/lethe/config/ledgeropen"
)

func jobConfig(t *testing.T) (*config.Config, string) {
	t.Helper()
	dir := t.TempDir()
	cfg := &config.Config{}
	cfg.Capture.Ledger.SQLite = filepath.Join(dir, "ledger.db")
	return cfg, filepath.Join(dir, "lethe.yaml")
}

// A job that hashes subjects needs the salt; one that does not runs
// without it, with no hasher.
func TestOpenJob_TheSaltIsRequiredOnlyWhenTheJobHashesSubjects(t *testing.T) {
	cfg, path := jobConfig(t)
	t.Setenv(ledgeropen.EnvSalt, "")
	t.Setenv(ledgeropen.EnvSaltFile, "")
	if _, err := OpenJob(cfg, path, JobNeeds{HashesSubjects: true}); err == nil || !strings.Contains(err.Error(), ledgeropen.EnvSalt) {
		t.Fatalf("a job hashing subjects without a salt: %v, want an error naming %s", err, ledgeropen.EnvSalt)
	}
	job, err := OpenJob(cfg, path, JobNeeds{})
	if err != nil {
		t.Fatal(err)
	}
	defer job.Close()
	if job.Hasher != nil || job.Ledger == nil || job.Certifier != nil {
		t.Fatalf("job %+v: want the ledger, no hasher, no certifier", job)
	}
}

// RecordSalt records the salt in a ledger that holds none; a job under
// another salt is then refused, and names the ledger it opened.
func TestOpenJob_RecordSaltBindsTheLedgerToIt(t *testing.T) {
	cfg, path := jobConfig(t)
	t.Setenv(ledgeropen.EnvSalt, strings.Repeat("ab", 32))
	job, err := OpenJob(cfg, path, JobNeeds{HashesSubjects: true, RecordSalt: true})
	if err != nil {
		t.Fatal(err)
	}
	job.Close()
	t.Setenv(ledgeropen.EnvSalt, strings.Repeat("cd", 32))
	_, err = OpenJob(cfg, path, JobNeeds{})
	if err == nil || !strings.HasPrefix(err.Error(), "opening the ledger "+cfg.Capture.Ledger.SQLite) {
		t.Fatalf("another salt after the first was recorded: %v, want it refused, naming the ledger", err)
	}
}
