package pgstore

import (
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// serverError returns err with the PostgreSQL error in it reduced to what
// logs and the forget journal (which the admin API shows) may hold: no
// personal data. Kept: severity, SQLSTATE, the names of the schema, table,
// column, data type and constraint, and the message up to its first quote
// or colon, which is where PostgreSQL's messages put the values they quote
// (`invalid input syntax for type uuid: "…"`). Dropped: detail and hint (a
// duplicate key's detail quotes the row), and the whole message of an error
// raised inside a function or trigger, which is the application's own text.
// Other errors are returned as they are.
func serverError(err error) error {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return err
	}
	safe := &pgconn.PgError{
		Severity: pe.Severity, SeverityUnlocalized: pe.SeverityUnlocalized, Code: pe.Code,
		SchemaName: pe.SchemaName, TableName: pe.TableName, ColumnName: pe.ColumnName,
		DataTypeName: pe.DataTypeName, ConstraintName: pe.ConstraintName,
		Message: safeServerMessage(pe),
	}
	// pgx returns the server's error itself; wrapped, keep the wrapping text.
	if prefix, ok := strings.CutSuffix(err.Error(), pe.Error()); ok && prefix != "" {
		return fmt.Errorf("%s%w", prefix, safe)
	}
	return safe
}

func safeServerMessage(pe *pgconn.PgError) string {
	msg := "message withheld: raised inside a function or trigger"
	if pe.Where == "" {
		msg = pe.Message
		if i := strings.IndexAny(msg, `"':`); i >= 0 {
			msg = strings.TrimSpace(msg[:i])
		}
	}
	var names []string
	for _, n := range []struct{ kind, name string }{
		{"schema", pe.SchemaName}, {"table", pe.TableName}, {"column", pe.ColumnName},
		{"data type", pe.DataTypeName}, {"constraint", pe.ConstraintName},
	} {
		if n.name != "" {
			names = append(names, n.kind+" "+n.name)
		}
	}
	if len(names) > 0 {
		msg += " (" + strings.Join(names, ", ") + ")"
	}
	return msg
}
