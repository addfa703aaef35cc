package extract

// Op is what a write did to a record.
type Op uint8

const (
	// OpWrite inserted or updated a record (its subjects are as tagged).
	OpWrite Op = iota + 1
	// OpDelete deleted a record by id (the application's own delete).
	OpDelete
	// OpUnattributed wrote to a configured table in a way whose rows cannot
	// be known from the statement (INSERT … SELECT, MERGE, TRUNCATE, a
	// writable CTE, an UPDATE of the subject with no id in its WHERE …).
	OpUnattributed
	// OpDeleteAll deleted every record of Table (a Pinecone deleteAll or
	// namespace delete); ID is empty.
	OpDeleteAll
	// OpDeleteByFilter deleted the records of Table that a filter matched
	// in the store (a Pinecone delete by metadata filter): which ones only
	// the store knows, so ID is empty.
	OpDeleteByFilter
)

// Tag is one record-level fact extracted from a write.
type Tag struct {
	Table    string   // schema-qualified configured table
	Op       Op       //
	ID       string   // record id in text form; "" when the database generates it
	Subjects []string // data subjects, as they appear in the data
	Reason   string   // for OpUnattributed: why, in words for an error message
}
