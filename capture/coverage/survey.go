package coverage

import (
	"time"

	"github.com/lethe-privacy/lethe/extract"
)

// Survey is the coverage of every store at one moment, as the admin API's
// GET /v1/coverage answers it and the console and MCP show it: per store,
// what has a rule, what is ignored and why, and the findings. It names
// tables, columns, indexes and namespaces only, never a row's values.
type Survey struct {
	CheckedAt time.Time     `json:"checked_at"`
	Stores    []StoreSurvey `json:"stores"`
	// Errors and Warnings count the findings of every store; Unreadable
	// counts the stores that could not be read.
	Errors     int `json:"errors"`
	Warnings   int `json:"warnings"`
	Unreadable int `json:"unreadable"`
	// Runs are the latest reconcile adoptions and retention sweeps the
	// transparency log records (newest first); their counts are in the
	// signed reports, which the log names by hash and does not hold.
	Runs []LoggedRun `json:"runs"`
}

// StoreSurvey is one store's part of a Survey.
type StoreSurvey struct {
	Store string `json:"store"` // the wing's name: "postgres", "pinecone"
	// Error says why the store could not be read (then Report is empty):
	// it names the store and what to check, never a value.
	Error string `json:"error,omitempty"`
	Report
	// Rules are the tables (postgres) or index namespaces (pinecone) the
	// configuration has capture rules for; Ignored, those it exempts.
	Rules   []Rule   `json:"rules"`
	Ignored []Ignore `json:"ignored"`
}

// Rule is a table or an index's namespace the configuration captures.
type Rule struct {
	Table     string `json:"table,omitempty"`
	Index     string `json:"index,omitempty"`
	Namespace string `json:"namespace,omitempty"` // "*" for every other namespace
	Where     string `json:"where"`
}

// LoggedRun is a reconcile or sweep event of the transparency log.
type LoggedRun struct {
	Event    string `json:"event"` // reconcile.adopted or retention.swept
	RunID    string `json:"run_id"`
	LogIndex int64  `json:"log_index"`
	// ReportSHA256 is the hash of the run's signed report's payload.
	ReportSHA256 string `json:"report_sha256"`
}

// Rules lists the rules of store (StorePostgres: the capture rules of
// tables; StorePinecone: each index's namespace rules).
func (p Policy) Rules(store string) []Rule {
	out := []Rule{}
	switch store {
	case StorePostgres:
		for _, t := range p.Tables {
			out = append(out, Rule{Table: t.Table, Where: t.Where})
		}
	case StorePinecone:
		for _, ix := range p.Indexes {
			for _, ns := range ix.Namespaces {
				out = append(out, Rule{Index: ix.Index, Namespace: extract.CanonicalNamespace(ns), Where: ix.Where})
			}
		}
	}
	return out
}

// Ignored lists the ignores of store: of tables for StorePostgres, of
// index namespaces for StorePinecone.
func (p Policy) Ignored(store string) []Ignore {
	out := []Ignore{}
	for _, ig := range p.Ignore {
		switch {
		case store == StorePostgres && ig.Table != "":
			out = append(out, ig)
		case store == StorePinecone && ig.Table == "" && ig.Index != "":
			ig.Namespace = extract.CanonicalNamespace(ig.Namespace)
			out = append(out, ig)
		}
	}
	return out
}
