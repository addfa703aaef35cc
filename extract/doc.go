// Package extract turns writes sent to a vector store into tags: which
// record of which configured table (or namespace) was written, and which data
// subjects (people) it is about. It is pure: no I/O, no imports of Lethe's
// other packages. SQL is parsed with PostgreSQL's own parser
// (github.com/pganalyze/pg_query_go/v6), after a cheap prefilter that skips
// statements that name no configured table.
//
// The flow for one statement text:
//
//	rules.Mentions(sql)            // no parse, no allocation; false → ignore
//	rules.Analyze(sql, searchPath) // parse once; cache the result per text
//	analysis.Tags(params)          // per execution (Bind), cheap
//	analysis.NewCopyDecoder()      // for COPY … FROM STDIN; fed CopyData
//
// Files mirror statement kinds: insert.go, update.go, delete.go, copy.go
// (plus copytext.go and copybinary.go for the data), where.go for the id
// predicates UPDATE and DELETE share, params.go for Bind values.
//
// What is attributed: INSERT … VALUES (literals or $n, with ON CONFLICT
// DO NOTHING or DO UPDATE SET col = EXCLUDED.col; without a column list,
// in the catalog's column order, columnorder.go), INSERT … SELECT of one
// row of plain values, UPDATE setting subject
// columns to literals or $n (by id, or with ID "" otherwise), DELETE by id,
// and COPY FROM STDIN in text, CSV and binary formats. Writes whose rows
// cannot be known from the statement (INSERT … SELECT, MERGE, TRUNCATE,
// writable CTEs, subject columns set from expressions, COPY from a server
// file or program, SQL-level PREPARE of a write) yield one OpUnattributed
// tag with a reason.
//
// Writes made by code running inside the server are unattributed too: a
// DO block naming a configured table, and, with the writers a connector
// found in the database's catalog (Rules.FindWriters, Rules.WithWriters),
// calls of functions and procedures that write configured tables and
// writes to relations whose triggers or rules do (serverside.go). Only the
// statement the client sends is read: the catalog says what the server
// will run. The catalog also names the views, partitions and inheritance
// children of configured tables (relations.go): a write to one is analysed
// as a write to the table. DDL that may change any of this is recognised
// (ddl.go) so that a session can have the catalog read again.
//
// The Pinecone wing reads its request bodies itself (proxy/pinecone/pcextract)
// into the same Tag, with tables named by CanonicalNamespace (namespace.go).
package extract
