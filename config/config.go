// Package config loads and validates lethe-proxy's YAML configuration and
// compiles its rules once (Compiled): the commands ask it for what they need.
// Every error names the file, the line and what to change.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/lethe-privacy/lethe/capture"
)

// Config is the whole configuration file.
type Config struct {
	Postgres        Postgres `yaml:"postgres"`
	Pinecone        Pinecone `yaml:"pinecone"`
	Capture         Capture  `yaml:"capture"`
	Coverage        Coverage `yaml:"coverage"`
	Forget          Forget   `yaml:"forget"`
	Log             Log      `yaml:"log"`
	ShutdownTimeout Duration `yaml:"shutdown_timeout"`

	file  string
	lines map[string]int // dotted key path → line, for error messages
	// offline skips opening the files the configuration names (LoadOffline).
	offline bool
	// parsed are capture.tables with their expressions parsed, by
	// validateCapture, for compile.
	parsed []parsedTable
	// compiled is what compile made of the rules once the file validated.
	compiled *Compiled
}

// Postgres configures the PostgreSQL relay.
type Postgres struct {
	Listen             string    `yaml:"listen"`
	Upstream           string    `yaml:"upstream"`
	UpstreamTLS        string    `yaml:"upstream_tls"`
	UpstreamCAFile     string    `yaml:"upstream_ca_file"`
	UpstreamServerName string    `yaml:"upstream_server_name"`
	ConnectTimeout     Duration  `yaml:"connect_timeout"`
	TLS                ClientTLS `yaml:"tls"`
	MaxMessageSize     ByteSize  `yaml:"max_message_size"`
	// Retention declares how long the server's WAL archives and backups
	// are kept, for the horizon of each certificate (docs/certificate.md).
	Retention CopyRetention `yaml:"retention"`
}

// ClientTLS configures TLS termination for clients of the proxy.
type ClientTLS struct {
	CertFile string `yaml:"cert_file"`
	KeyFile  string `yaml:"key_file"`
	Required bool   `yaml:"required"`
}

// Capture configures which writes are tagged and where tags are kept.
type Capture struct {
	// Mode is strict (refuse writes that cannot be attributed) or permissive.
	Mode     capture.Mode `yaml:"mode"`
	FailOpen bool         `yaml:"fail_open"`
	Ledger   LedgerStore  `yaml:"ledger"`
	// Store is a connection string the proxy uses itself to check the
	// database (resolving intents left pending by a crash). Give the
	// password through PGPASSWORD or ~/.pgpass, not here.
	Store string `yaml:"store"`
	// Database is the database Tables are in. Only sessions connected to
	// it are captured; sessions to other databases on the same server
	// pass untouched. Default: the database Store connects to. Parse
	// fills it in whenever Tables is set.
	Database string `yaml:"database"`
	// RecoveryInterval is how often intents that dead proxies left
	// pending are looked for and resolved against capture.store.
	RecoveryInterval Duration `yaml:"recovery_interval"`
	// OnRestore says what the relays do once a store shows a restore
	// (capture.store: another system identifier, a new timeline, a WAL
	// position behind the one recorded; a Pinecone index: another host
	// under its name, a namespace's LSN behind the one recorded): refuse
	// writes to the configured tables and namespaces until lethe-proxy
	// replay ran (default), or warn.
	OnRestore OnRestore `yaml:"on_restore"`
	// MaxStatementsInFlight bounds the statements one client connection
	// may have sent and not yet had answered; more are refused (54000).
	MaxStatementsInFlight int `yaml:"max_statements_in_flight"`
	// WAL turns the WAL follower on (default) or off: it tags every
	// committed row of Tables from the server's WAL, however it was
	// written. It needs wal_level = logical and a Store role with
	// REPLICATION that owns the tables (docs/wal.md).
	WAL WAL `yaml:"wal"`
	// WALSlot names the follower's replication slot and publications (one
	// slot per ledger; proxies sharing a ledger share it). Default:
	// DefaultSlotName of Database ("lethe_app" for app), since a
	// slot's name is unique across the server's databases.
	WALSlot string `yaml:"wal_slot"`
	// Intents says which writes take a write-ahead intent in the ledger
	// before they are forwarded: "auto" (default) all but those to tables
	// the WAL follower streams in full, whose committed rows the slot
	// holds until the ledger has them; "always" every write, as with
	// capture.wal: off (docs/wal.md, Modes).
	Intents Intents `yaml:"intents"`
	// WALDecodingMem is logical_decoding_work_mem for the follower's
	// replication connection: the server memory its walsender may hold a
	// transaction in before spilling it to disk. 0 (unset) leaves the
	// server's setting.
	WALDecodingMem ByteSize    `yaml:"wal_decoding_mem"`
	Tables         []TableRule `yaml:"tables"`
}

// Follows reports whether the WAL follower runs.
func (c Capture) Follows() bool { return len(c.Tables) > 0 && c.WAL.On() }

// SkipsFollowedIntents reports whether writes to tables the WAL follower
// streams in full go without a write-ahead intent (Intents "auto").
func (c Capture) SkipsFollowedIntents() bool { return c.Follows() && c.Intents == IntentsAuto }

// LedgerStore says where the ledger lives: an SQLite file (default) or a
// PostgreSQL database shared by several proxies.
type LedgerStore struct {
	SQLite   string `yaml:"sqlite"`
	Postgres string `yaml:"postgres"`
	// Owner names this proxy in the ledger, so that after a crash its next
	// run resolves its own pending intents at once. Default: host name and
	// postgres.listen. Proxies sharing a ledger need distinct names.
	Owner string `yaml:"owner"`
	// Lease is how long a proxy's claim on a shared PostgreSQL ledger lasts
	// without renewal (renewed every sixth of it). Past it, other proxies
	// resolve its pending intents and it refuses writes until it renews.
	Lease Duration `yaml:"lease"`
}

// TableRule names a vector table, its id column and its subject expressions.
type TableRule struct {
	Table    string   `yaml:"table"`
	ID       string   `yaml:"id"`
	Subjects []string `yaml:"subjects"`
	// Description says in words what the table holds ("chat memory
	// embeddings"), for the data map (lethe-proxy export). It is left out
	// of the rules digest certificates carry: it changes nothing forget
	// does.
	Description string `yaml:"description" json:"-"`
	// Vacuum runs VACUUM (INDEX_CLEANUP ON) on the table after each
	// forget, so that deleted rows and their HNSW index entries are
	// physically removed rather than left for autovacuum; retention
	// sweeps vacuum after deleting too. physical: vacuum and scrub run the
	// same VACUUM as their first step, stating in the certificate when it
	// was not possible instead of failing the forget.
	Vacuum bool `yaml:"vacuum"`
	// Physical says what forget does about the bytes a delete leaves in
	// the table's pages: off (default); report (scan the table, its
	// TOAST table and its indexes for the deleted records' bytes after
	// verify and vacuum, and state the counts); vacuum (VACUUM
	// (INDEX_CLEANUP ON), then scan); scrub (vacuum, scan, REINDEX
	// CONCURRENTLY the indexes and rewrite a small table whose pages
	// still hold them, scan again). docs/forget.md.
	Physical Physical `yaml:"physical" json:",omitempty"`
	// ScrubRewriteMaxPages bounds the table scrub may rewrite with VACUUM
	// FULL, which holds an ACCESS EXCLUSIVE lock while it runs: the pages
	// of the table, its TOAST table and their indexes together. Unset:
	// DefaultScrubRewriteMaxPages; 0: never rewrite.
	ScrubRewriteMaxPages *int64 `yaml:"scrub_rewrite_max_pages" json:",omitempty"`
	// PhysicalRescan is how often a forget whose page scan found residue
	// scans again (vacuum and scrub rerun their steps first), until clean,
	// the request's deadline, or the bytes looked for are lost (held in
	// memory only, at most a day; a restart loses them). Unset:
	// DefaultPhysicalRescan; 0: never. Each result is logged as a
	// forget.physical report (docs/forget.md, "Later re-scans").
	PhysicalRescan *Duration `yaml:"physical_rescan" json:",omitempty"`
	// PhysicalWindow batches physical: vacuum and scrub across forgets:
	// forget certifies at once with the scan taken right after its
	// delete, and the table's step (one VACUUM, one scrub) runs once per
	// window for every forget in it, each forget's scan then logged as a
	// forget.physical report. Unset or 0: the step runs inside each
	// forget. At most MaxPhysicalWindow (docs/forget.md, "Batched
	// physical step").
	PhysicalWindow *Duration `yaml:"physical_window" json:",omitempty"`
	Retention      `yaml:",inline"`
}

// Forget configures erasure requests, certificates and the admin API.
// Forget is enabled when signing_key is set.
type Forget struct {
	// SigningKey is the Ed25519 private key (PKCS#8 PEM, from
	// lethe-proxy keygen) that signs certificates and log checkpoints.
	SigningKey string `yaml:"signing_key"`
	// TrustedKeys is the published key set (JSON) that certificates are
	// verified against: the current key and retired ones with their
	// validity windows. Default: the signing key alone.
	TrustedKeys string `yaml:"trusted_keys"`
	// LogOrigin names the transparency log in its checkpoints.
	LogOrigin string `yaml:"log_origin"`
	// Deadline after receipt (default 720h: one month, GDPR Art. 12(3)).
	Deadline Duration `yaml:"deadline"`
	// TokenTTL is how long a preview's confirm token is valid (default 10m).
	TokenTTL Duration `yaml:"token_ttl"`
	// CertificateValidity is how long a certificate's claim stands before
	// it should be re-verified (default 8760h: a year).
	CertificateValidity Duration `yaml:"certificate_validity"`
	// Forgotten says what happens to a new write about a forgotten
	// subject: refuse (default, SQLSTATE LT003) or flag (forward, log).
	Forgotten ForgottenWrites `yaml:"forgotten"`
	// LateWrites says what the WAL follower does with a committed row
	// about a forgotten subject, written by any path: delete (default:
	// delete and verify it, log a forget.late_write event of the request)
	// or flag (log and count it).
	LateWrites LateWrites `yaml:"late_writes"`
	// TombstoneRefresh is how often the proxy re-reads the forgotten
	// subjects, so that a forget accepted by another proxy sharing the
	// ledger (or a lift) takes effect here too.
	TombstoneRefresh Duration `yaml:"tombstone_refresh"`
	Admin            Admin    `yaml:"admin"`
}

// Admin configures the admin HTTP API.
type Admin struct {
	Listen     string   `yaml:"listen"`      // default 127.0.0.1:7070
	TokensFile string   `yaml:"tokens_file"` // bearer token hashes and roles (lethe-proxy admin-token)
	TLS        AdminTLS `yaml:"tls"`
}

// AdminTLS is the admin API's certificate: set both files to serve TLS
// alone.
type AdminTLS struct {
	CertFile string `yaml:"cert_file"`
	KeyFile  string `yaml:"key_file"`
	// Required is read only to be refused with what to write instead
	// (refusedKeys): the files alone decide.
	Required any `yaml:"required"`
}

// Log configures structured logging.
type Log struct {
	Level  string `yaml:"level"`
	Format string `yaml:"format"`
}

// Defaults are applied to keys the file leaves out.
func Defaults() Config {
	return Config{
		Postgres: Postgres{
			Listen:         "127.0.0.1:6432",
			UpstreamTLS:    "disable",
			ConnectTimeout: Duration(10e9),
			MaxMessageSize: 64 << 20,
		},
		Pinecone: Pinecone{
			Listen:          "127.0.0.1:5081",
			MaxRequestSize:  4 << 20,
			MaxBufferedSize: 256 << 20,
			BodyTimeout:     Duration(60 * time.Second),
			VerifyDeadline:  Duration(60 * time.Second),
			ScanRate:        10,
		},
		Capture: Capture{
			Mode:                  capture.Strict,
			Ledger:                LedgerStore{Lease: Duration(time.Minute)},
			RecoveryInterval:      Duration(time.Minute),
			MaxStatementsInFlight: 100_000,
			WAL:                   WALOn,
			Intents:               IntentsAuto,
			OnRestore:             OnRestoreRefuse,
		},
		Coverage: Coverage{
			Mode:           CoverageReport,
			SubjectColumns: DefaultSubjectColumns,
		},
		Forget: Forget{
			LogOrigin:           "lethe.local/forget-log",
			Deadline:            Duration(720 * time.Hour),
			TokenTTL:            Duration(10 * time.Minute),
			CertificateValidity: Duration(8760 * time.Hour),
			Forgotten:           ForgottenRefuse,
			LateWrites:          LateWritesDelete,
			TombstoneRefresh:    Duration(10 * time.Second),
			Admin:               Admin{Listen: "127.0.0.1:7070"},
		},
		Log:             Log{Level: "info", Format: "text"},
		ShutdownTimeout: Duration(30e9),
	}
}

// Load reads, parses and validates the file at path.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("lethe: reading config: %w", err)
	}
	return Parse(path, data)
}

// LoadOffline reads, parses and validates the file at path as Load does,
// except that the files it names (keys, certificates, CA bundles, the
// tokens file) are not opened: for commands that use the rules alone, such
// as lethe-proxy export in CI, where those files exist only on the
// proxy's host.
func LoadOffline(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("lethe: reading config: %w", err)
	}
	return parse(path, data, true)
}

// Parse parses and validates data; name is used in error messages.
func Parse(name string, data []byte) (*Config, error) { return parse(name, data, false) }

func parse(name string, data []byte, offline bool) (*Config, error) {
	cfg := Defaults()
	cfg.file, cfg.offline = name, offline
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, cfg.yamlError(err)
	}
	cfg.lines = map[string]int{}
	recordLines(&root, "", cfg.lines)
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&cfg); err != nil && err != io.EOF { // EOF: empty file, all defaults
		return nil, cfg.yamlError(err)
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if err := cfg.compile(); err != nil {
		return nil, fmt.Errorf("lethe: invalid config\n%w", err)
	}
	return &cfg, nil
}

var yamlLine = regexp.MustCompile(`line (\d+): `)

// yamlError rewrites yaml.v3's "line N: ..." messages as "file:N: ...".
func (c *Config) yamlError(err error) error {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		var msgs []error
		for _, e := range te.Errors {
			hint := " (check the value's type against config.example.yaml)"
			if strings.Contains(e, "not found in type") {
				hint = " (check the key's spelling against config.example.yaml)"
			}
			msgs = append(msgs, errors.New(c.file+":"+yamlLine.ReplaceAllString(e, "$1: ")+hint))
		}
		return fmt.Errorf("lethe: invalid config: %w", errors.Join(msgs...))
	}
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		return fmt.Errorf("lethe: invalid config: %s:%s: %s", c.file, m[1], yamlLine.ReplaceAllString(err.Error(), ""))
	}
	return fmt.Errorf("lethe: invalid config %s: %w", c.file, err)
}

func recordLines(n *yaml.Node, prefix string, lines map[string]int) {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			recordLines(c, prefix, lines)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			key := fmt.Sprintf("%s[%d]", prefix, i)
			lines[key] = c.Line
			recordLines(c, key, lines)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			key := n.Content[i].Value
			if prefix != "" {
				key = prefix + "." + key
			}
			lines[key] = n.Content[i].Line
			recordLines(n.Content[i+1], key, lines)
		}
	}
}

// at formats an error about the key at path: "file:line: path: msg".
func (c *Config) at(path, format string, args ...any) error {
	loc := c.file
	if line, ok := c.lines[path]; ok {
		loc += ":" + strconv.Itoa(line)
	}
	return fmt.Errorf("%s: %s: %s", loc, path, fmt.Sprintf(format, args...))
}

// atIndex formats an error about element i of the sequence at path, at the
// element's own line when known.
func (c *Config) atIndex(path string, i int, format string, args ...any) error {
	loc := c.file
	if line, ok := c.lines[fmt.Sprintf("%s[%d]", path, i)]; ok {
		loc += ":" + strconv.Itoa(line)
	}
	return fmt.Errorf("%s: %s", loc, fmt.Sprintf(format, args...))
}

// Where locates the key at path ("capture.tables[2]", "coverage.ignore[0]")
// in the file, as "file:line", or the file alone when the key is not in it:
// for messages about a rule that name where to change it.
func (c *Config) Where(path string) string {
	if line, ok := c.lines[path]; ok {
		return c.file + ":" + strconv.Itoa(line)
	}
	return c.file
}
