// Package benchdb is the server-side setup and error text the bench programs
// share.
package benchdb

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5/pgconn"
)

// CreateVectorTable drops and re-creates table (id text PRIMARY KEY,
// embedding vector(dim), metadata jsonb) through admin, creating the vector
// extension if missing, and returns the oid of type vector (for binary
// parameters). Its errors name the statement that failed.
func CreateVectorTable(ctx context.Context, admin *pgconn.PgConn, table string, dim int) (uint32, error) {
	for _, s := range []string{
		"CREATE EXTENSION IF NOT EXISTS vector",
		"DROP TABLE IF EXISTS " + table,
		fmt.Sprintf("CREATE TABLE %s (id text PRIMARY KEY, embedding vector(%d), metadata jsonb)", table, dim),
	} {
		if _, err := admin.Exec(ctx, s).ReadAll(); err != nil {
			return 0, fmt.Errorf("%s: %s", s, Describe(err))
		}
	}
	res := admin.ExecParams(ctx, "SELECT 'vector'::regtype::oid", nil, nil, nil, nil).Read()
	if res.Err != nil || len(res.Rows) != 1 {
		return 0, fmt.Errorf("vector oid: %s", Describe(res.Err))
	}
	oid, err := strconv.ParseUint(string(res.Rows[0][0]), 10, 32)
	if err != nil {
		return 0, fmt.Errorf("vector oid %q: %v", res.Rows[0][0], err)
	}
	return uint32(oid), nil
}

// Describe is err as a line for the bench's log: a server error as its
// SQLSTATE, message, detail and hint, so that refusals by the proxy (LT001,
// LT002, 54000, ...) show as such; "<nil>" for nil.
func Describe(err error) string {
	if err == nil {
		return "<nil>"
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		s := fmt.Sprintf("SQLSTATE %s: %s", pe.Code, pe.Message)
		if pe.Detail != "" {
			s += " (detail: " + pe.Detail + ")"
		}
		if pe.Hint != "" {
			s += " (hint: " + pe.Hint + ")"
		}
		return s
	}
	return err.Error()
}
