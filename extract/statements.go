package extract

import pg_query "github.com/pganalyze/pg_query_go/v6"

// Statements splits a simple-protocol Query's text into its statements with
// PostgreSQL's own parser, so semicolons inside literals, dollar quotes and
// comments do not split. Callers keep the text whole when it does not parse
// (the server will reject it anyway).
func Statements(sql string) ([]string, error) {
	return pg_query.SplitWithParser(sql, true)
}
