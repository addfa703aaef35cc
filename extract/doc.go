// Package extract turns writes sent to a vector store into tags: which
// record of which configured table (or namespace) was written, and which data
// subjects (people) it is about. It is pure: no I/O, no imports of Lethe's
// other packages. SQL is parsed with PostgreSQL's own parser
// (github.com/pganalyze/pg_query_go/v6), after a cheap prefilter that skips
// statements that name no configured table.
package extract
