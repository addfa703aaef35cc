package config

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/lethe-privacy/lethe/extract"
)

// Coverage says which tables and namespaces must have a rule, and what the
// proxy does about those that have none (lethe-proxy check, docs/coverage.md).
type Coverage struct {
	// Mode is report (default: log and count uncovered tables) or enforce
	// (also refuse writes to them).
	Mode CoverageMode `yaml:"mode"`
	// SubjectColumns are column-name patterns ('*' matches any run of
	// characters, case-insensitive) that suggest a table is about people:
	// a table with such a column, like one with a vector column, needs a
	// rule or an ignore.
	SubjectColumns []string `yaml:"subject_columns"`
	// Ignore lists tables and namespaces that need no rule, each with the
	// reason (it appears in the data map, lethe-proxy export).
	Ignore []IgnoreRule `yaml:"ignore"`
}

// IgnoreRule exempts one table, or one namespace of a Pinecone index, from
// coverage: it is known and deliberately not captured.
type IgnoreRule struct {
	// Table is schema.table (PostgreSQL).
	Table string `yaml:"table"`
	// Index and Namespace name a Pinecone namespace ("" and "__default__"
	// are the default namespace).
	Index     string `yaml:"index"`
	Namespace string `yaml:"namespace"`
	// Reason says why no person's data is there, or why it is kept.
	Reason string `yaml:"reason"`
}

// Retention is how long a table's rows or a namespace's records are kept.
type Retention struct {
	// Retain is the age past which a record is deleted by lethe-proxy sweep
	// ("90d", "12h"); zero keeps records until a forget.
	Retain Duration `yaml:"retain"`
	// RetainBy names what a record's age is counted from: a timestamp
	// column or a subject-style expression (cmetadata->>'created_at') of a
	// table, or a metadata field of a Pinecone record holding seconds since
	// the Unix epoch.
	RetainBy string `yaml:"retain_by"`
}

// DefaultSubjectColumns are the column names check treats as naming a
// person when the file does not list its own.
var DefaultSubjectColumns = []string{
	"user_id", "*_user_id", "userid", "email", "*_email", "email_address",
	"customer_id", "account_id", "owner_id", "author_id", "person_id",
	"member_id", "profile_id", "patient_id", "employee_id", "contact_id",
	"subject_id",
}

// minRetain keeps a typo ("90s" for "90d") from deleting live data.
const minRetain = time.Hour

// LooksLikeSubject reports whether a column name matches one of the
// patterns (case-insensitive; '*' matches any run of characters).
func (cv Coverage) LooksLikeSubject(column string) bool {
	name := strings.ToLower(column)
	for _, p := range cv.SubjectColumns {
		if ok, _ := path.Match(strings.ToLower(p), name); ok {
			return true
		}
	}
	return false
}

// IgnoredNamespace returns the ignore rule of a namespace of an index, if any.
func (cv Coverage) IgnoredNamespace(index, namespace string) (IgnoreRule, bool) {
	ns := extract.CanonicalNamespace(namespace)
	for _, r := range cv.Ignore {
		if r.Index == index && r.Table == "" && extract.CanonicalNamespace(r.Namespace) == ns {
			return r, true
		}
	}
	return IgnoreRule{}, false
}

func (c *Config) validateCoverage() []error {
	var errs []error
	cv := c.Coverage
	if !slices.Contains([]CoverageMode{CoverageReport, CoverageEnforce}, cv.Mode) {
		errs = append(errs, c.at("coverage.mode", "%q is not one of report, enforce", cv.Mode))
	}
	for i, p := range cv.SubjectColumns {
		if _, err := path.Match(p, ""); err != nil || p == "" {
			errs = append(errs, c.atIndex("coverage.subject_columns", i, "coverage.subject_columns[%d]: %q is not a name pattern (write e.g. user_id or *_user_id)", i, p))
		}
	}
	ruled := map[string]bool{}
	for _, t := range c.Capture.Tables {
		ruled[t.Table] = true
	}
	seen := map[string]bool{}
	for i, r := range cv.Ignore {
		at := func(format string, args ...any) error {
			return c.atIndex("coverage.ignore", i, fmt.Sprintf("coverage.ignore[%d]: ", i)+format, args...)
		}
		key := r.Table
		switch {
		case r.Table != "" && (r.Index != "" || r.Namespace != ""):
			errs = append(errs, at("set table, or index and namespace, not both"))
		case r.Table == "" && r.Index == "":
			errs = append(errs, at("name what is ignored: table: schema.table, or index: and namespace: for Pinecone"))
		case r.Table != "" && !strings.Contains(r.Table, "."):
			errs = append(errs, at("table %q needs its schema (write e.g. public.%s)", r.Table, r.Table))
		case ruled[r.Table]:
			errs = append(errs, at("table %q has a capture rule and an ignore; keep one", r.Table))
		case r.Index != "":
			key = r.Index + "/" + extract.CanonicalNamespace(r.Namespace)
		}
		if seen[key] {
			errs = append(errs, at("%q is ignored twice; keep one", key))
		}
		seen[key] = true
		if strings.TrimSpace(r.Reason) == "" {
			errs = append(errs, at("reason is missing: say why no person's data is there (it goes in the data map)"))
		}
	}
	return errs
}

// validateRetention checks one rule's retain and retain_by.
func validateRetention(at func(string, ...any) error, r Retention) []error {
	switch {
	case r.Retain == 0 && r.RetainBy == "":
		return nil
	case r.Retain == 0:
		return []error{at("retain_by %q without retain: say how long records are kept (write e.g. retain: 90d)", r.RetainBy)}
	case r.RetainBy == "":
		return []error{at("retain without retain_by: name the timestamp column or metadata field the age is counted from")}
	case r.Retain.D() < minRetain:
		return []error{at("retain %s is shorter than 1h; write days as e.g. 90d", r.Retain.D())}
	}
	return nil
}
