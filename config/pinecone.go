package config

import (
	"crypto/x509"
	"fmt"
	"net"
	"net/url"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/lethe-privacy/lethe/extract"
)

// Pinecone configures the Pinecone relay; it runs when Indexes is set.
type Pinecone struct {
	// Listen serves REST and gRPC on one port, as a Pinecone index host.
	Listen string `yaml:"listen"`
	// TLS, when set, serves TLS (ALPN h2 and http/1.1) instead of
	// cleartext HTTP/1.1 and h2c.
	TLS ServerTLS `yaml:"tls"`
	// MaxRequestSize bounds one request body; larger ones are refused
	// (413 / RESOURCE_EXHAUSTED) without reaching the index host.
	MaxRequestSize ByteSize `yaml:"max_request_size"`
	// MaxBufferedSize bounds the request bodies held in memory at once,
	// across all connections; requests beyond it wait, then are answered
	// UNAVAILABLE.
	MaxBufferedSize ByteSize `yaml:"max_buffered_size"`
	// BodyTimeout bounds how long a request body may take to arrive; a
	// slower one is answered 408 / DEADLINE_EXCEEDED and returns its
	// share of MaxBufferedSize.
	BodyTimeout Duration `yaml:"body_timeout"`
	// Indexes are the index hosts relayed to. With several, a request's
	// Host header names its index (see proxy/pinecone).
	Indexes []PineconeIndex `yaml:"indexes"`
	// ControlPlane, when set, relays Pinecone's control plane so that
	// SDKs which look an index's host up there reach the index through
	// this proxy (see PineconeControlPlane).
	ControlPlane *PineconeControlPlane `yaml:"control_plane"`
	// VerifyDeadline bounds how long forget polls an index after a delete
	// for the subject's records to be gone (Pinecone's deletes become
	// visible late); a layer not absent by then stays unverified and is
	// verified again later. Default and most 60s.
	VerifyDeadline Duration `yaml:"verify_deadline"`
	// ScanInterval, when not zero, has a serving proxy scan every
	// namespace rule of every index this often (the backstop for writes
	// that never passed the proxy): records the ledger lacks are
	// recorded, records about forgotten subjects are late writes. Zero
	// (the default) scans never: each scan reads every record, billed by
	// Pinecone in read units (docs/pinecone.md).
	ScanInterval Duration `yaml:"scan_interval"`
	// ScanRate bounds the backstop's list and fetch requests per second
	// per index, so that it leaves the index's rate limits to the
	// application. Default 10.
	ScanRate float64 `yaml:"scan_rate"`
}

// DefaultPineconeAPIKeyEnv is the environment variable holding the API key
// forget uses on the index hosts, unless an index names another.
const DefaultPineconeAPIKeyEnv = "LETHE_PINECONE_API_KEY"

// ServerTLS is a certificate and its key, served to clients.
type ServerTLS struct {
	CertFile string `yaml:"cert_file"`
	KeyFile  string `yaml:"key_file"`
}

// PineconeIndex is one upstream index host and its capture rules.
type PineconeIndex struct {
	// Name is the index's name; with several indexes, clients reach it as
	// a host name starting with it (docs.lethe.internal for "docs").
	Name string `yaml:"name"`
	// Host is the index host: https://… (Pinecone) or http://…
	// (Pinecone Local, cleartext).
	Host string `yaml:"host"`
	// UpstreamCAFile verifies an https host; default the system roots.
	UpstreamCAFile string `yaml:"upstream_ca_file"`
	// Namespaces say which metadata fields name a record's subject, per
	// namespace or "*" for every namespace without a rule of its own.
	Namespaces []NamespaceRule `yaml:"namespaces"`
	// APIKeyEnv names the environment variable holding the API key forget
	// uses on this index (the relay forwards the application's own key).
	// Default DefaultPineconeAPIKeyEnv. The key itself never goes in the
	// file.
	APIKeyEnv string `yaml:"api_key_env"`
	// API is the index's data plane: "vectors" (the default: the vectors
	// and records APIs) or "documents" (API version 2026-07's document
	// index). Capture reads every API's writes whatever it says; forget,
	// reconcile and sweep reach the index through this one.
	API string `yaml:"api"`
	// Retention declares how long the index's backups are kept, for the
	// horizon of each certificate.
	Retention PineconeRetention `yaml:"retention"`
}

// The values of a Pinecone index's api key.
const (
	PineconeAPIVectors   = "vectors"
	PineconeAPIDocuments = "documents"
)

// DataPlane is the index's api, "vectors" when unset.
func (ix *PineconeIndex) DataPlane() string {
	if ix.API == "" {
		return PineconeAPIVectors
	}
	return ix.API
}

// KeyEnv is the environment variable holding the index's API key.
func (ix *PineconeIndex) KeyEnv() string {
	if ix.APIKeyEnv != "" {
		return ix.APIKeyEnv
	}
	return DefaultPineconeAPIKeyEnv
}

// NamespaceRule names the metadata fields holding the subject of the
// records in one namespace ("*": any other).
type NamespaceRule struct {
	Namespace string   `yaml:"namespace"`
	Subjects  []string `yaml:"subjects"`
	// Description says in words what the namespace holds, for the data
	// map; like TableRule's, it is not part of the rules digest.
	Description string `yaml:"description" json:"-"`
	Retention   `yaml:",inline"`
}

// envName is what a shell accepts as a variable name.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// indexName is Pinecone's rule for index names.
var indexName = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?$`)

func (c *Config) validatePinecone() []error {
	p := c.Pinecone
	if _, set := c.lines["pinecone"]; !set {
		return nil
	}
	var errs []error
	if _, _, err := net.SplitHostPort(p.Listen); err != nil {
		errs = append(errs, c.at("pinecone.listen", "%q is not host:port (write e.g. 127.0.0.1:5081)", p.Listen))
	}
	if (p.TLS.CertFile == "") != (p.TLS.KeyFile == "") {
		errs = append(errs, c.at("pinecone.tls", "set both cert_file and key_file, or neither"))
	}
	if p.TLS.CertFile != "" {
		errs = append(errs, c.readable("pinecone.tls.cert_file", p.TLS.CertFile))
		errs = append(errs, c.readable("pinecone.tls.key_file", p.TLS.KeyFile))
	}
	if p.MaxRequestSize < 64<<10 || p.MaxRequestSize > 1<<30 {
		errs = append(errs, c.at("pinecone.max_request_size", "%d bytes is outside 64KiB..1GiB (Pinecone itself accepts 2MB; default 4MiB)", p.MaxRequestSize))
	} else if p.MaxBufferedSize <= p.MaxRequestSize {
		errs = append(errs, c.at("pinecone.max_buffered_size", "%d bytes must be larger than pinecone.max_request_size (%d bytes): it bounds all bodies in memory at once (default 256MiB)", p.MaxBufferedSize, p.MaxRequestSize))
	}
	if d := p.BodyTimeout.D(); d < time.Second || d > 10*time.Minute {
		errs = append(errs, c.at("pinecone.body_timeout", "%s is outside 1s..10m (how long a request body may take to arrive; default 60s)", d))
	}
	// One verification must fit in a forget request's lease (2 minutes,
	// renewed between attempts), or another engine could take the request
	// while this one still waits.
	if d := p.VerifyDeadline.D(); d < time.Second || d > time.Minute {
		errs = append(errs, c.at("pinecone.verify_deadline", "%s is outside 1s..1m (how long forget waits for a delete to become visible; default 60s; a layer not absent by then is verified again later)", d))
	}
	if d := p.ScanInterval.D(); d != 0 && d < time.Second {
		errs = append(errs, c.at("pinecone.scan_interval", "%s is below 1s: write 0 (no backstop scan, the default) or how often to scan, e.g. 1h", d))
	}
	if p.ScanRate <= 0 || p.ScanRate > 1000 {
		errs = append(errs, c.at("pinecone.scan_rate", "%g is outside (0, 1000] (the backstop scan's list and fetch requests per second per index; default 10)", p.ScanRate))
	}
	errs = append(errs, c.validateControlPlane()...)
	if len(p.Indexes) == 0 {
		errs = append(errs, c.at("pinecone", "indexes is missing: name the index hosts to relay to "+
			"(write e.g. indexes: [{name: docs, host: \"https://docs-abc123.svc.aped-1234.pinecone.io\"}])"))
	}
	seen := map[string]bool{}
	for i, ix := range p.Indexes {
		path := fmt.Sprintf("pinecone.indexes[%d]", i)
		at := func(format string, args ...any) error {
			return c.atIndex("pinecone.indexes", i, path+": "+format, args...)
		}
		switch {
		case ix.Name == "":
			errs = append(errs, at("name is missing (the index's name, e.g. name: docs)"))
		case !indexName.MatchString(ix.Name):
			errs = append(errs, at("name %q is not an index name (lower-case letters, digits and '-')", ix.Name))
		case seen[ix.Name]:
			errs = append(errs, at("index %q is configured twice; merge the entries", ix.Name))
		}
		seen[ix.Name] = true
		errs = append(errs, c.validateIndexHost(at, ix)...)
		errs = append(errs, validateNamespaces(at, ix.Namespaces)...)
		switch ix.DataPlane() {
		case PineconeAPIVectors:
		case PineconeAPIDocuments:
			for j, r := range ix.Namespaces {
				for _, f := range r.Subjects {
					if strings.HasPrefix(f, "_") {
						errs = append(errs, at("namespaces[%d]: subject %q starts with '_', a name a document index reserves (its fields are top-level names like user_id)", j, f))
					}
				}
			}
		default:
			errs = append(errs, at("api %q is neither vectors nor documents (write api: documents for an API 2026-07 document index; the default is vectors)", ix.API))
		}
		if ix.APIKeyEnv != "" && !envName.MatchString(ix.APIKeyEnv) {
			errs = append(errs, at("api_key_env %q is not an environment variable name (write e.g. api_key_env: PINECONE_DOCS_KEY; the key itself goes in that variable, never in this file)", ix.APIKeyEnv))
		}
	}
	return errs
}

func (c *Config) validateIndexHost(at func(string, ...any) error, ix PineconeIndex) []error {
	var errs []error
	u, err := url.Parse(ix.Host)
	switch {
	case ix.Host == "":
		errs = append(errs, at("host is missing (the index host from the Pinecone console, e.g. host: \"https://docs-abc123.svc.aped-1234.pinecone.io\")"))
	case err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "":
		errs = append(errs, at("host %q is not an https:// or http:// URL (write e.g. \"https://docs-abc123.svc.aped-1234.pinecone.io\")", ix.Host))
	case strings.Trim(u.Path, "/") != "" || u.RawQuery != "":
		errs = append(errs, at("host %q has a path or query; give the index host alone", ix.Host))
	}
	if ix.UpstreamCAFile != "" {
		if u != nil && u.Scheme == "http" {
			errs = append(errs, at("upstream_ca_file is set but host %q is cleartext http://", ix.Host))
		}
		if _, err := LoadCertPool(ix.UpstreamCAFile); err != nil && !c.offline {
			errs = append(errs, at("upstream_ca_file: %v", err))
		}
	}
	return errs
}

func validateNamespaces(at func(string, ...any) error, rules []NamespaceRule) []error {
	var errs []error
	seen := map[string]bool{}
	for j, r := range rules {
		ns := extract.CanonicalNamespace(r.Namespace)
		if seen[ns] {
			errs = append(errs, at("namespaces[%d]: namespace %q has a second rule (\"\" and \"__default__\" are the same namespace); merge them", j, r.Namespace))
		}
		seen[ns] = true
		if len(r.Subjects) == 0 {
			errs = append(errs, at("namespaces[%d]: subjects is missing (the metadata fields naming the person, e.g. subjects: [user_id])", j))
		}
		for _, f := range r.Subjects {
			if f == "" || strings.HasPrefix(f, "$") {
				errs = append(errs, at("namespaces[%d]: subject %q is not a metadata field name", j, f))
			}
		}
		errs = append(errs, validateRetention(func(format string, args ...any) error {
			return at(fmt.Sprintf("namespaces[%d]: ", j)+format, args...)
		}, r.Retention)...)
	}
	return errs
}

// LoadCertPool reads a PEM file of CA certificates into a pool.
func LoadCertPool(file string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("cannot read %q: %w", file, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%q holds no PEM certificate", file)
	}
	return pool, nil
}
