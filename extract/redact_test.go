package extract

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRedact_LeavesOutStatementTextAndValues(t *testing.T) {
	const subject = "secret@example.com"
	r := testRules(t)
	analyzeErr := func(sql string) error {
		_, err := r.Analyze(sql, nil)
		require.Error(t, err, sql)
		return err
	}
	tagsErr := func(sql string, p Params) error {
		as, err := r.Analyze(sql, nil)
		require.NoError(t, err)
		require.Len(t, as, 1)
		_, err = as[0].Tags(p)
		require.Error(t, err, sql)
		return err
	}
	cases := []struct {
		name      string
		err       error
		wantFault string // what the redacted text still says
	}{
		{"unterminated string", analyzeErr(`INSERT INTO docs (id, user_id) VALUES ('n1', '` + subject),
			"extract: parse: unterminated quoted string at character 46"},
		{"syntax error at the subject", analyzeErr(`INSERT INTO docs (id, user_id) VALUES ('n1' '` + subject + `')`),
			"extract: parse: syntax error at character 45"},
		{"malformed text array", tagsErr(`DELETE FROM docs WHERE id = ANY($1)`, textParams(`{"`+subject+`}`)),
			"malformed array literal: unterminated quote"},
		{"multi-dimensional array", tagsErr(`DELETE FROM docs WHERE id = ANY($1)`, textParams(`{{`+subject+`}}`)),
			"multi-dimensional array: only one-dimensional arrays are supported"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Contains(t, c.err.Error(), "secret@", "the client is still shown its own input")
			wrapped := fmt.Errorf("capture: %w", c.err)
			for _, got := range []string{Redact(c.err), Redact(wrapped)} {
				assert.NotContains(t, got, "secret")
				assert.NotContains(t, got, "example.com")
				assert.NotContains(t, got, "VALUES")
				assert.NotContains(t, got, "docs")
			}
			assert.Contains(t, Redact(c.err), c.wantFault)
			assert.Equal(t, "capture: "+Redact(c.err), Redact(wrapped), "the wrapping text is kept")
		})
	}
}

func TestRedact_KeepsOtherErrors(t *testing.T) {
	assert.Equal(t, "", Redact(nil))
	assert.Equal(t, "ledger: closed", Redact(errors.New("ledger: closed")))
}

func TestParseFault_StopsBeforeQuotedText(t *testing.T) {
	cases := map[string]string{
		`syntax error at or near "'x'"`:                        "syntax error",
		`unterminated quoted string at or near "'x"`:           "unterminated quoted string",
		`syntax error at end of input`:                         "syntax error",
		`zero-length delimited identifier at or near """"`:     "zero-length delimited identifier",
		`improper qualified name (too many dotted names): a.b`: "improper qualified name (too many dotted names)",
		`type modifier is not allowed for type "x"`:            "type modifier is not allowed for type",
		`"quoted first"`: "the statement did not parse",
	}
	for msg, want := range cases {
		assert.Equal(t, want, parseFault(msg), msg)
	}
}
