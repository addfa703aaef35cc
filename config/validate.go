package config

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/lethe-privacy/lethe/capture"
	"github.com/lethe-privacy/lethe/extract"
)

// maxMessageCeiling is PostgreSQL's own limit for one protocol message.
const maxMessageCeiling = 1<<30 - 1

func (c *Config) validate() error {
	var errs []error
	p := c.Postgres
	if _, _, err := net.SplitHostPort(p.Listen); err != nil {
		errs = append(errs, c.at("postgres.listen", "%q is not host:port (write e.g. 127.0.0.1:6432)", p.Listen))
	}
	if p.Upstream == "" && len(c.Pinecone.Indexes) == 0 {
		errs = append(errs, c.at("postgres", "upstream is missing (write e.g. upstream: 127.0.0.1:5432; a proxy for Pinecone alone sets pinecone.indexes instead)"))
	} else if p.Upstream == "" && len(c.Capture.Tables) > 0 {
		errs = append(errs, c.at("capture.tables", "rules for PostgreSQL tables need postgres.upstream (write e.g. upstream: 127.0.0.1:5432)"))
	} else if _, _, err := net.SplitHostPort(p.Upstream); p.Upstream != "" && err != nil {
		errs = append(errs, c.at("postgres.upstream", "%q is not host:port (write e.g. db.internal:5432)", p.Upstream))
	}
	if !slices.Contains([]string{"disable", "require", "verify-full"}, p.UpstreamTLS) {
		errs = append(errs, c.at("postgres.upstream_tls", "%q is not one of disable, require, verify-full", p.UpstreamTLS))
	}
	c.resolvePaths()
	p = c.Postgres
	if p.UpstreamCAFile != "" {
		errs = append(errs, c.readable("postgres.upstream_ca_file", p.UpstreamCAFile))
	}
	if (p.TLS.CertFile == "") != (p.TLS.KeyFile == "") {
		errs = append(errs, c.at("postgres.tls", "set both cert_file and key_file, or neither"))
	}
	if p.TLS.CertFile != "" {
		errs = append(errs, c.readable("postgres.tls.cert_file", p.TLS.CertFile))
		errs = append(errs, c.readable("postgres.tls.key_file", p.TLS.KeyFile))
	}
	if p.TLS.Required && p.TLS.CertFile == "" {
		errs = append(errs, c.at("postgres.tls.required", "TLS is required but no cert_file/key_file is set"))
	}
	if p.MaxMessageSize == maxMessageCeiling+1 {
		// "1GiB" means PostgreSQL's own limit, which is one byte less.
		c.Postgres.MaxMessageSize = maxMessageCeiling
	} else if p.MaxMessageSize < 1024 || p.MaxMessageSize > maxMessageCeiling {
		errs = append(errs, c.at("postgres.max_message_size", "%d bytes is outside 1KiB..1GiB (PostgreSQL's limit, 1073741823 bytes)", p.MaxMessageSize))
	}
	if p.ConnectTimeout <= 0 {
		errs = append(errs, c.at("postgres.connect_timeout", "must be positive (write e.g. 10s)"))
	}
	errs = append(errs, c.validateCapture()...)
	errs = append(errs, c.validatePinecone()...)
	errs = append(errs, c.validateCoverage()...)
	errs = append(errs, c.validateForget()...)
	errs = append(errs, c.refusedKeysSet()...)
	if !slices.Contains([]string{"debug", "info", "warn", "error"}, c.Log.Level) {
		errs = append(errs, c.at("log.level", "%q is not one of debug, info, warn, error", c.Log.Level))
	}
	if !slices.Contains([]string{"text", "json"}, c.Log.Format) {
		errs = append(errs, c.at("log.format", "%q is not one of text, json", c.Log.Format))
	}
	if c.ShutdownTimeout < 0 {
		errs = append(errs, c.at("shutdown_timeout", "must not be negative"))
	}
	if err := errors.Join(errs...); err != nil {
		return errors.Join(errors.New("lethe: invalid config"), err)
	}
	return nil
}

func (c *Config) readable(path, file string) error {
	if c.offline {
		return nil
	}
	f, err := os.Open(file)
	if err != nil {
		return c.at(path, "cannot read %q: %v", file, err)
	}
	f.Close()
	return nil
}

// resolvePaths makes relative file names relative to the config file's
// directory, so the proxy finds them whatever its working directory.
func (c *Config) resolvePaths() {
	dir := filepath.Dir(c.file)
	for _, p := range []*string{&c.Postgres.UpstreamCAFile, &c.Postgres.TLS.CertFile, &c.Postgres.TLS.KeyFile, &c.Capture.Ledger.SQLite,
		&c.Forget.SigningKey, &c.Forget.TrustedKeys, &c.Forget.Admin.TokensFile, &c.Forget.Admin.TLS.CertFile, &c.Forget.Admin.TLS.KeyFile,
		&c.Pinecone.TLS.CertFile, &c.Pinecone.TLS.KeyFile} {
		if *p != "" && !filepath.IsAbs(*p) {
			*p = filepath.Join(dir, *p)
		}
	}
	for i := range c.Pinecone.Indexes {
		if p := &c.Pinecone.Indexes[i].UpstreamCAFile; *p != "" && !filepath.IsAbs(*p) {
			*p = filepath.Join(dir, *p)
		}
	}
	if cp := c.Pinecone.ControlPlane; cp != nil {
		for _, p := range []*string{&cp.UpstreamCAFile, &cp.TLS.CertFile, &cp.TLS.KeyFile} {
			if *p != "" && !filepath.IsAbs(*p) {
				*p = filepath.Join(dir, *p)
			}
		}
	}
}

func (c *Config) validateCapture() []error {
	var errs []error
	cp := c.Capture
	if !slices.Contains([]capture.Mode{capture.Strict, capture.Permissive}, cp.Mode) {
		errs = append(errs, c.at("capture.mode", "%q is not one of strict, permissive", cp.Mode))
	}
	if cp.Ledger.SQLite != "" && cp.Ledger.Postgres != "" {
		errs = append(errs, c.at("capture.ledger", "set sqlite or postgres, not both"))
	}
	if cp.Ledger.Lease < Duration(3*time.Second) {
		// Renewed every sixth of it: shorter leases lapse on a slow query.
		errs = append(errs, c.at("capture.ledger.lease", "must be at least 3s (write e.g. 60s)"))
	}
	if !slices.Contains([]OnRestore{"", OnRestoreRefuse, OnRestoreWarn}, cp.OnRestore) {
		errs = append(errs, c.at("capture.on_restore", "%q is not one of refuse, warn", cp.OnRestore))
	}
	if cp.RecoveryInterval <= 0 {
		errs = append(errs, c.at("capture.recovery_interval", "must be positive (write e.g. 1m)"))
	}
	if cp.MaxStatementsInFlight < 1000 {
		// Below it a pgx batch or a psycopg pipeline of ordinary size fails.
		errs = append(errs, c.at("capture.max_statements_in_flight", "must be at least 1000 (default 100000)"))
	}
	if !slices.Contains([]WAL{WALOn, WALOff, "true", "false"}, cp.WAL) {
		errs = append(errs, c.at("capture.wal", "%q is not one of on, off", cp.WAL))
	}
	if !slices.Contains([]Intents{IntentsAuto, IntentsAlways}, cp.Intents) {
		errs = append(errs, c.at("capture.intents", "%q is not one of auto, always", cp.Intents))
	}
	if err := ValidSlotName(cp.WALSlot); cp.WALSlot != "" && err != nil {
		errs = append(errs, c.at("capture.wal_slot", "%q cannot name a replication slot (use 1 to 50 of a-z, 0-9, _)", cp.WALSlot))
	}
	if err := validDecodingMem(cp.WALDecodingMem); err != nil {
		errs = append(errs, c.at("capture.wal_decoding_mem", "%v", err))
	}
	if cp.Follows() && cp.Store == "" {
		errs = append(errs, c.at("capture.wal", "the WAL follower needs capture.store, a connection string for a role with REPLICATION that owns the tables; set it, or capture.wal: off (docs/wal.md)"))
	}
	seen := map[string]bool{}
	for i, t := range cp.Tables {
		path := fmt.Sprintf("capture.tables[%d]", i)
		at := func(format string, args ...any) error {
			return c.atIndex("capture.tables", i, path+": "+format, args...)
		}
		switch {
		case t.Table == "":
			errs = append(errs, at("table is missing (write e.g. table: public.langchain_pg_embedding)"))
		case seen[t.Table]:
			errs = append(errs, at("table %q has a second rule; merge them", t.Table))
		}
		seen[t.Table] = true
		if t.ID == "" {
			errs = append(errs, at("id is missing (the record id column, e.g. id: id)"))
		}
		if len(t.Subjects) == 0 {
			errs = append(errs, at("subjects is missing (e.g. subjects: [\"cmetadata->>'user_id'\"])"))
		}
		parsed := parsedTable{rule: extract.Rule{Table: t.Table, ID: t.ID}}
		for _, expr := range t.Subjects {
			s, err := extract.ParseSubject(expr)
			if err != nil {
				errs = append(errs, at("subject %q: %v", expr, err))
			}
			parsed.rule.Subjects = append(parsed.rule.Subjects, s)
		}
		if !slices.Contains([]Physical{"", PhysicalOff, PhysicalReport, PhysicalVacuum, PhysicalScrub}, t.Physical) {
			errs = append(errs, at("physical %q is not one of off, report, vacuum, scrub (report scans the table's pages for a "+
				"forgotten person's bytes after each forget, vacuum vacuums first, scrub also rebuilds what still holds them; "+
				"docs/forget.md)", t.Physical))
		}
		if t.ScrubRewriteMaxPages != nil && *t.ScrubRewriteMaxPages < 0 {
			errs = append(errs, at("scrub_rewrite_max_pages %d is negative: write 0 to never rewrite the table, or a page count "+
				"(8 kB pages; default %d)", *t.ScrubRewriteMaxPages, DefaultScrubRewriteMaxPages))
		} else if t.ScrubRewriteMaxPages != nil && t.Physical != PhysicalScrub {
			errs = append(errs, at("scrub_rewrite_max_pages is set but physical is %q: it bounds only physical: scrub's rewrite; "+
				"remove it or write physical: scrub", t.physicalName()))
		}
		errs = append(errs, validatePhysicalRescan(at, t)...)
		errs = append(errs, validatePhysicalWindow(at, t)...)
		errs = append(errs, validateRetention(at, t.Retention)...)
		if t.RetainBy != "" {
			s, err := extract.ParseSubject(t.RetainBy)
			if err != nil {
				errs = append(errs, at("retain_by %q: %v", t.RetainBy, err))
			}
			parsed.retainBy = &s
		}
		c.parsed = append(c.parsed, parsed)
	}
	if err := c.resolveDatabase(); err != nil {
		errs = append(errs, err)
	}
	if c.Capture.WALSlot == "" {
		// Slots are server-wide: one name per database, not one for all.
		c.Capture.WALSlot = DefaultSlotName(c.Capture.Database)
	}
	return errs
}

// PostgreSQL's bounds for logical_decoding_work_mem, in kB (64kB to
// MAX_KILOBYTES, INT_MAX on 64-bit servers).
const (
	minDecodingMemKB = 64
	maxDecodingMemKB = 1<<31 - 1
)

// validDecodingMem checks capture.wal_decoding_mem against what PostgreSQL
// accepts for logical_decoding_work_mem; 0 means unset.
func validDecodingMem(b ByteSize) error {
	switch kb := int64(b) / 1024; {
	case b == 0:
		return nil
	case b%1024 != 0:
		return fmt.Errorf("%d bytes is not a whole number of kB (write e.g. 256MB)", b)
	case kb < minDecodingMemKB || kb > maxDecodingMemKB:
		return fmt.Errorf("%dkB is outside PostgreSQL's 64kB..%dkB for logical_decoding_work_mem (write e.g. 256MB)", kb, maxDecodingMemKB)
	}
	return nil
}

func (c *Config) validateForget() []error {
	f := c.Forget
	if f.SigningKey == "" {
		return nil // forget disabled
	}
	var errs []error
	errs = append(errs, c.readable("forget.signing_key", f.SigningKey))
	if f.TrustedKeys != "" {
		errs = append(errs, c.readable("forget.trusted_keys", f.TrustedKeys))
	}
	pineconeRules := false
	for _, ix := range c.Pinecone.Indexes {
		pineconeRules = pineconeRules || len(ix.Namespaces) > 0
	}
	if len(c.Capture.Tables) == 0 && !pineconeRules {
		errs = append(errs, c.at("forget", "forget needs the tables or namespaces it deletes from: add capture.tables or pinecone.indexes[].namespaces"))
	}
	if c.Capture.Store == "" && len(c.Capture.Tables) > 0 {
		errs = append(errs, c.at("forget", "forget needs capture.store, the connection string the proxy uses to delete and verify"))
	}
	if f.LogOrigin == "" || strings.ContainsAny(f.LogOrigin, " \t\n+") {
		errs = append(errs, c.at("forget.log_origin", "%q must be a non-empty name without spaces or '+' (e.g. example.com/lethe-log)", f.LogOrigin))
	}
	for key, d := range map[string]Duration{"forget.deadline": f.Deadline, "forget.token_ttl": f.TokenTTL, "forget.certificate_validity": f.CertificateValidity, "forget.tombstone_refresh": f.TombstoneRefresh} {
		if d <= 0 {
			errs = append(errs, c.at(key, "must be positive"))
		}
	}
	if !slices.Contains([]ForgottenWrites{ForgottenRefuse, ForgottenFlag}, f.Forgotten) {
		errs = append(errs, c.at("forget.forgotten", "%q is not one of refuse, flag", f.Forgotten))
	}
	if !slices.Contains([]LateWrites{LateWritesDelete, LateWritesFlag}, f.LateWrites) {
		errs = append(errs, c.at("forget.late_writes", "%q is not one of delete, flag", f.LateWrites))
	}
	if _, _, err := net.SplitHostPort(f.Admin.Listen); err != nil {
		errs = append(errs, c.at("forget.admin.listen", "%q is not host:port (write e.g. 127.0.0.1:7070)", f.Admin.Listen))
	}
	if f.Admin.TokensFile == "" {
		errs = append(errs, c.at("forget.admin", "tokens_file is missing: create tokens with lethe-proxy admin-token"))
	} else {
		errs = append(errs, c.readable("forget.admin.tokens_file", f.Admin.TokensFile))
	}
	if (f.Admin.TLS.CertFile == "") != (f.Admin.TLS.KeyFile == "") {
		errs = append(errs, c.at("forget.admin.tls", "set both cert_file and key_file, or neither"))
	}
	return errs
}
