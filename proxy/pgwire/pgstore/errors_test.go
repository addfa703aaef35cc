package pgstore

import (
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestServerError_KeepsCodeAndNamesButNoValues(t *testing.T) {
	cases := []struct {
		name string
		in   *pgconn.PgError
		want string
	}{
		{"a value quoted after a colon", &pgconn.PgError{Severity: "ERROR", Code: "22P02",
			Message: `invalid input syntax for type uuid: "alice@example.com"`},
			"ERROR: invalid input syntax for type uuid (SQLSTATE 22P02)"},
		{"a row in the detail", &pgconn.PgError{Severity: "ERROR", Code: "23505",
			Message: `duplicate key value violates unique constraint "docs_pkey"`,
			Detail:  `Key (id)=(alice@example.com) already exists.`, SchemaName: "public", TableName: "docs", ConstraintName: "docs_pkey"},
			"ERROR: duplicate key value violates unique constraint (schema public, table docs, constraint docs_pkey) (SQLSTATE 23505)"},
		{"text raised by a trigger", &pgconn.PgError{Severity: "ERROR", Code: "P0001",
			Message: `cannot delete the notes of alice@example.com`, Where: "PL/pgSQL function keep_notes() line 3 at RAISE"},
			"ERROR: message withheld: raised inside a function or trigger (SQLSTATE P0001)"},
		{"a value quoted in the middle", &pgconn.PgError{Severity: "ERROR", Code: "22003",
			Message: `value "alice@example.com" is out of range for type integer`},
			"ERROR: value (SQLSTATE 22003)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, err := range []error{tc.in, fmt.Errorf("pgvector store: deleting from public.docs: %w", tc.in)} {
				got := serverError(err)
				assert.NotContains(t, got.Error(), "alice")
				assert.Contains(t, got.Error(), tc.want)
				var pe *pgconn.PgError
				require.True(t, errors.As(got, &pe), "still a PgError for callers that branch on SQLSTATE")
				assert.Equal(t, tc.in.Code, pe.Code)
			}
			assert.Equal(t, "pgvector store: deleting from public.docs: "+tc.want,
				serverError(fmt.Errorf("pgvector store: deleting from public.docs: %w", tc.in)).Error())
		})
	}
}

func TestServerError_PassesOtherErrors(t *testing.T) {
	err := errors.New("pgvector store: table public.docs does not exist")
	assert.Same(t, err, serverError(err))
}
