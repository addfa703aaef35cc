package coverage

// Severity says whether a finding fails the check.
type Severity string

const (
	// Error fails the check (lethe-proxy check exits 1).
	Error Severity = "error"
	// Warning is reported and does not fail it.
	Warning Severity = "warning"
)

// Codes of findings: stable, for scripts reading the JSON output.
const (
	// CodeUncoveredTable: a table with a vector column or a column named
	// like a subject has neither a capture rule nor an ignore (error).
	CodeUncoveredTable = "uncovered_table"
	// CodeMissingTable: a capture rule or an ignore names a table that
	// does not exist (warning: the application may create it later).
	CodeMissingTable = "missing_table"
	// CodeMissingColumn: a capture rule reads a column its table does not
	// have (error: capture cannot attribute writes to it).
	CodeMissingColumn = "missing_column"
	// CodeUncoveredNamespace: a namespace of a configured Pinecone index
	// has no namespace rule (and no "*") nor an ignore (error).
	CodeUncoveredNamespace = "uncovered_namespace"
)

// Stores a finding is about.
const (
	StorePostgres = "postgres"
	StorePinecone = "pinecone"
)

// Finding is one problem or warning. It names tables, columns, indexes
// and namespaces, never a row's values.
type Finding struct {
	Severity  Severity `json:"severity"`
	Code      string   `json:"code"`
	Store     string   `json:"store"`
	Table     string   `json:"table,omitempty"`
	Column    string   `json:"column,omitempty"`
	Index     string   `json:"index,omitempty"`
	Namespace string   `json:"namespace,omitempty"`
	// Where it was found: "database" (the catalog), "index docs" (its
	// stats), or the configuration file and line of the rule at fault.
	Where   string `json:"where"`
	Message string `json:"message"`
	// Fix says what to do, with the YAML to add when there is some.
	Fix string `json:"fix"`
}

// Report is the outcome of one check.
type Report struct {
	Findings []Finding `json:"findings"`
	// TablesChecked and NamespacesChecked count what was looked at.
	TablesChecked     int `json:"tables_checked"`
	NamespacesChecked int `json:"namespaces_checked"`
	// Unchecked names the stores that could not be read: the report says
	// nothing about them, so it is never "ok" while any is listed.
	Unchecked []string `json:"unchecked,omitempty"`
}

// Errors counts the findings of severity Error.
func (r Report) Errors() int { return r.count(Error) }

// Warnings counts the findings of severity Warning.
func (r Report) Warnings() int { return r.count(Warning) }

func (r Report) count(s Severity) int {
	n := 0
	for _, f := range r.Findings {
		if f.Severity == s {
			n++
		}
	}
	return n
}
