package benchdb

import (
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

func TestDescribeShowsSQLStateDetailAndHintOfAWrappedServerError(t *testing.T) {
	pe := &pgconn.PgError{Code: "LT001", Message: "refused", Detail: "the table is captured", Hint: "use the proxy"}
	got := Describe(fmt.Errorf("insert: %w", pe))
	want := "SQLSTATE LT001: refused (detail: the table is captured) (hint: use the proxy)"
	if got != want {
		t.Errorf("Describe = %q, want %q", got, want)
	}
}

func TestDescribeOfOtherErrorsAndNil(t *testing.T) {
	if got := Describe(errors.New("connection reset")); got != "connection reset" {
		t.Errorf("Describe(plain) = %q", got)
	}
	if got := Describe(nil); got != "<nil>" {
		t.Errorf("Describe(nil) = %q", got)
	}
}
