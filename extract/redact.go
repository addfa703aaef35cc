package extract

import (
	"errors"
	"strconv"
	"strings"

	"github.com/pganalyze/pg_query_go/v6/parser"
)

// Errors about a statement or a value quote it, so that the client that
// sent it sees where it went wrong. Logs must never hold statements, rows
// or subjects: Redact gives the text of such an error without the quote.

// inputError is an error whose message quotes the input it is about.
type inputError struct {
	msg      string // with the input quoted, for the client that sent it
	redacted string // the same without the input, for logs
}

func (e *inputError) Error() string { return e.msg }

// Redact returns err's text with the statement text and values that this
// package's errors quote left out, keeping what kind of fault it was and
// where. Text that wraps such an error is kept as it is; errors of other
// packages are returned as their Error() gives them.
func Redact(err error) string {
	if err == nil {
		return ""
	}
	text := err.Error()
	var in *inputError
	if errors.As(err, &in) {
		// An error wrapping it with %w holds its text verbatim, and every
		// error it wraps in turn is inside that text.
		text = strings.Replace(text, in.msg, in.redacted, 1)
	}
	return text
}

// parseError is a statement PostgreSQL's parser rejected. The parser's
// messages read `<fault> at or near "<rest of the statement>"` or
// `<fault> at end of input`; the redacted form keeps the fault and the
// character position PostgreSQL reports.
func parseError(err error) error {
	var pe *parser.Error
	if !errors.As(err, &pe) {
		return &inputError{msg: "extract: parse: " + err.Error(), redacted: "extract: parse: the statement did not parse"}
	}
	redacted := "extract: parse: " + parseFault(pe.Message)
	if pe.Cursorpos > 0 {
		redacted += " at character " + strconv.Itoa(pe.Cursorpos)
	}
	return &inputError{msg: "extract: parse: " + pe.Message, redacted: redacted}
}

// parseFault is the part of a parser message before any quoted text,
// position or colon, which is where messages insert the statement's text.
func parseFault(msg string) string {
	for _, stop := range []string{" at or near", " at end of input", `"`, "'", ":"} {
		if i := strings.Index(msg, stop); i >= 0 {
			msg = msg[:i]
		}
	}
	if msg = strings.TrimSpace(msg); msg == "" {
		return "the statement did not parse"
	}
	return msg
}

// badValue is an error about a value: what was wrong, the value (clipped),
// then why.
func badValue(what, value, why string) error {
	return &inputError{
		msg:      what + " " + strconv.Quote(clip(value)) + why,
		redacted: what + why,
	}
}

// clip shortens a value quoted in an error message for the client.
func clip(s string) string {
	if len(s) > 24 {
		return s[:24] + "…"
	}
	return s
}
