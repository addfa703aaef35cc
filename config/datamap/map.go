package datamap

import (
	"fmt"
	"time"

	"github.com/lethe-privacy/lethe/certificate"
	"github.com/lethe-privacy/lethe/config"
	"github.com/lethe-privacy/lethe/extract"
	"github.com/lethe-privacy/lethe/proxy/pgwire/pgstore"
	"github.com/lethe-privacy/lethe/proxy/pinecone/pcstore"
)

// Schema names the JSON rendering's format.
const Schema = "lethe.datamap/v1"

// Map is the data map of one configuration.
type Map struct {
	Schema string `json:"schema"`
	// Covers says what Lethe protects; Excludes what no certificate
	// covers (certificate.DefaultExcludes).
	Covers   string   `json:"covers"`
	Excludes []string `json:"excludes"`
	Policies []Policy `json:"policies"`
	Tables   []Table  `json:"tables"`
	// Namespaces are the namespace rules of every Pinecone index, in
	// configuration order.
	Namespaces []Namespace `json:"namespaces"`
	// UnruledIndexes are Pinecone indexes relayed without a namespace
	// rule: nothing written to them is captured or forgotten.
	UnruledIndexes []string  `json:"unruled_indexes"`
	Ignored        []Ignored `json:"ignored"`
}

// Policy is one setting that decides what happens to people's data
// everywhere, with what it means.
type Policy struct {
	Key     string `json:"key"` // the configuration key: capture.mode
	Name    string `json:"name"`
	Setting string `json:"setting"`
	Meaning string `json:"meaning"`
}

// Table is one capture rule of a PostgreSQL table.
type Table struct {
	Table       string      `json:"table"`
	Database    string      `json:"database"`
	Description string      `json:"description"` // "" when the rule has none
	IDColumn    string      `json:"id_column"`
	Subjects    []string    `json:"subjects"` // the rule's subject expressions
	Retention   Retention   `json:"retention"`
	Forget      TableForget `json:"forget"`
}

// TableForget is what forget does in a table (pgstore.Plan).
type TableForget struct {
	Method        string   `json:"method"`
	Deletes       []string `json:"deletes"`
	VerifyMethod  string   `json:"verify_method"`
	VerifyQueries []string `json:"verify_queries"`
	Cleanup       string   `json:"cleanup"` // "" without vacuum: true
}

// Namespace is one namespace rule of a Pinecone index.
type Namespace struct {
	Index string `json:"index"`
	// Namespace is canonical: "__default__" for the default namespace,
	// "*" for every namespace without a rule of its own.
	Namespace   string          `json:"namespace"`
	Description string          `json:"description"`
	Subjects    []string        `json:"subjects"` // metadata fields
	Retention   Retention       `json:"retention"`
	Forget      NamespaceForget `json:"forget"`
}

// NamespaceForget is what forget does under a namespace rule
// (pinecone.Plan).
type NamespaceForget struct {
	Scope         string   `json:"scope"`
	Method        string   `json:"method"`
	VerifyMethod  string   `json:"verify_method"`
	VerifyQueries []string `json:"verify_queries"`
}

// Retention is how long records are kept.
type Retention struct {
	Retain   string `json:"retain"`    // "90d", "12h"; "" keeps records until a forget
	RetainBy string `json:"retain_by"` // the column, expression or metadata field the age is counted from
	Summary  string `json:"summary"`
}

// Ignored is one coverage.ignore entry: a table or namespace known to
// hold no person's data, or kept on purpose.
type Ignored struct {
	Store     string `json:"store"` // postgres or pinecone
	Table     string `json:"table,omitempty"`
	Index     string `json:"index,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	Reason    string `json:"reason"`
}

const covers = "Lethe records which person each write to the tables and namespaces below is about, and on an erasure " +
	"request deletes that person's records there, verifies that none is left and signs a certificate. It covers the " +
	"live rows of those PostgreSQL tables and the records of those Pinecone namespaces."

// Build makes the data map of cfg, a configuration config.Load accepted.
func Build(cfg *config.Config) (Map, error) {
	m := Map{
		Schema: Schema, Covers: covers, Excludes: certificate.DefaultExcludes(), Policies: policies(cfg),
		Tables: []Table{}, Namespaces: []Namespace{}, UnruledIndexes: []string{}, Ignored: []Ignored{},
	}
	for _, r := range cfg.Capture.Tables {
		t, err := pgstore.ParseTable(r.Table, r.ID, r.Subjects)
		if err != nil {
			return Map{}, fmt.Errorf("datamap: capture.tables %s: %w", r.Table, err)
		}
		plan, err := pgstore.PlanFor(t, r.Vacuum || r.Physical.Vacuums())
		if err != nil {
			return Map{}, fmt.Errorf("datamap: capture.tables %s: %w", r.Table, err)
		}
		m.Tables = append(m.Tables, Table{
			Table: r.Table, Database: cfg.Capture.Database, Description: r.Description, IDColumn: r.ID, Subjects: r.Subjects,
			Retention: retention(r.Retention, "column or expression "+r.RetainBy),
			Forget: TableForget{
				Method: plan.Method, Deletes: plan.Deletes, VerifyMethod: plan.VerifyMethod,
				VerifyQueries: plan.VerifyQueries, Cleanup: plan.Cleanup,
			},
		})
	}
	for _, ix := range cfg.Pinecone.Indexes {
		if len(ix.Namespaces) == 0 {
			m.UnruledIndexes = append(m.UnruledIndexes, ix.Name)
			continue
		}
		rules := make([]pcstore.Rule, len(ix.Namespaces))
		for i, r := range ix.Namespaces {
			rules[i] = pcstore.Rule{Namespace: r.Namespace, Fields: r.Subjects}
		}
		for i, r := range ix.Namespaces {
			plan := pcstore.PlanFor(rules[i], rules, pcstore.API(ix.DataPlane()), cfg.Pinecone.VerifyDeadline.D())
			m.Namespaces = append(m.Namespaces, Namespace{
				Index: ix.Name, Namespace: extract.CanonicalNamespace(r.Namespace), Description: r.Description, Subjects: r.Subjects,
				Retention: retention(r.Retention, "metadata field "+r.RetainBy+" (seconds since the Unix epoch)"),
				Forget:    NamespaceForget{Scope: plan.Scope, Method: plan.Method, VerifyMethod: plan.VerifyMethod, VerifyQueries: plan.VerifyQueries},
			})
		}
	}
	for _, r := range cfg.Coverage.Ignore {
		ig := Ignored{Store: "postgres", Table: r.Table, Reason: r.Reason}
		if r.Table == "" {
			ig = Ignored{Store: "pinecone", Index: r.Index, Namespace: extract.CanonicalNamespace(r.Namespace), Reason: r.Reason}
		}
		m.Ignored = append(m.Ignored, ig)
	}
	return m, nil
}

// retention states r; from says what the age is counted from.
func retention(r config.Retention, from string) Retention {
	if r.Retain == 0 {
		return Retention{Summary: "kept until a forget"}
	}
	d := duration(r.Retain.D())
	return Retention{Retain: d, RetainBy: r.RetainBy,
		Summary: "deleted by lethe-proxy sweep once older than " + d + ", counted from " + from + "; or earlier by a forget"}
}

// duration writes d as the configuration would: whole days as 90d, whole
// hours as 12h.
func duration(d time.Duration) string {
	const day = 24 * time.Hour
	switch {
	case d%day == 0:
		return fmt.Sprintf("%dd", d/day)
	case d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	}
	return d.String()
}
