package extract

// Rule says where a configured table keeps its record id and who its rows
// are about.
type Rule struct {
	// Table is schema-qualified: "public.langchain_pg_embedding".
	Table string
	// ID is the record id column ("id", "langchain_id", "node_id").
	ID string
	// Subjects are the expressions that yield the row's data subjects; a
	// row is about every subject any of them yields.
	Subjects []Subject
}

// Subject is a column, or a path into a JSON/JSONB column, that holds data
// subjects. When the value found is a JSON array, each element is a subject
// (a conversation with two participants is about both).
type Subject struct {
	Column string   // "user_id", "cmetadata"
	Path   []string // JSON object keys below Column; empty for a plain column
}
