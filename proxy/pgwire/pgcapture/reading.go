package pgcapture

import (
	"strings"
	"sync/atomic"

	"github.com/lethe-privacy/lethe/extract"
	"github.com/lethe-privacy/lethe/proxy/pgwire"
)

// How the server reads a statement's text.
//
// Two settings change where PostgreSQL's lexer finds the ends of strings,
// and so which statements a text holds, while the proxy's parser
// (pg_query) always reads text as UTF-8 with standard_conforming_strings
// on:
//
//   - standard_conforming_strings = off: a backslash in a plain '…' string
//     escapes the next character, as in E'…' (scan.l, xqstart). Text with
//     no backslash reads the same either way.
//   - a client-only client_encoding (SJIS, SHIFT_JIS_2004, BIG5, GBK, UHC,
//     GB18030, JOHAB): the server converts the text to its own encoding
//     before lexing it, and the second byte of a character there may be
//     0x40–0x7e, a backslash among them, which the proxy reads as ASCII.
//     Text of ASCII bytes only reads the same in every encoding.
//
// The truth is the server's ParameterStatus, sent at startup and before
// the ReadyForQuery of any request that changed a setting (also inside a
// function, by SET LOCAL, RESET or a rollback), never the client's SQL.
// A client may send a statement before the answers to earlier ones, which
// may have changed a setting unseen (a function calling set_config): the
// last report is then not known to hold.
//
// Rather than lex in the server's modes, the proxy refuses what it could
// misread, which is simpler and safer: pg_query has no lexer option for
// either setting, and every text scanner in capture (statement split,
// search_path and transaction classifiers, literal elision) would need a
// second mode that the tests then had to prove equal to the server's.
// While a setting is (or may be) unsafe, a Query or Parse that it could
// change the reading of (a backslash; a byte ≥ 0x80) is refused with
// LT001 if it names a configured table, or if it may change what capture
// follows: several statements (a COMMIT or SET the proxy would not see),
// or a word of a search_path change (extract.MayHideEffects). While
// client_encoding is unsafe, every write to a configured table is refused,
// prepared earlier or not, since its parameters and COPY data are
// converted too. Other statements pass untouched. Refusing does not depend on capture.mode: permissive mode
// records writes it cannot attribute, but here capture could not even
// tell which rows the server writes.

// unsafeClientEncodings are the client-only encodings, as PostgreSQL
// names them after clean_encoding_name (lower case, letters and digits),
// with their aliases.
var unsafeClientEncodings = []string{
	"sjis", "shiftjis", "mskanji", "win932", "windows932",
	"shiftjis2004",
	"big5", "win950", "windows950",
	"gbk", "win936", "windows936", "cp936",
	"uhc", "win949", "windows949",
	"gb18030",
	"johab",
}

// unsafeEncoding reports whether a client_encoding value is client-only.
func unsafeEncoding(name string) bool {
	clean := make([]byte, 0, len(name))
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'A' && c <= 'Z':
			clean = append(clean, c+'a'-'A')
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			clean = append(clean, c)
		}
	}
	for _, e := range unsafeClientEncodings {
		if string(clean) == e {
			return true
		}
	}
	return false
}

// textReading follows the server's reports of the two settings, and
// whether requests sent may still change them.
type textReading struct {
	// Written by the server side, read by the client side. A setting is
	// stored before the session counts the ReadyForQuery that follows its
	// report (exchanges), so a client side that sees the count sees the
	// setting.
	scsOff   atomic.Bool
	encoding atomic.Pointer[string] // a client-only client_encoding; nil for any other

	// The client side's own.
	ranInBatch bool // a Bind or Execute since the last Sync: it may have changed a setting
}

// start takes the settings the server reported at startup. Absent
// reports (a server that is not PostgreSQL) leave PostgreSQL's defaults.
func (r *textReading) start(params map[string]string) {
	for name, value := range params {
		r.report(name, value)
	}
}

// report applies a ParameterStatus.
func (r *textReading) report(name, value string) {
	switch strings.ToLower(name) {
	case "standard_conforming_strings":
		r.scsOff.Store(!strings.EqualFold(value, "on"))
	case "client_encoding":
		if unsafeEncoding(value) {
			r.encoding.Store(&value)
		} else {
			r.encoding.Store(nil)
		}
	}
}

// clientMessage notes a client message and reports whether a request
// sent before it may still change a setting: not yet answered (open), or
// run earlier in its batch.
func (r *textReading) clientMessage(typ byte, open bool) (unsettled bool) {
	unsettled = open || r.ranInBatch
	switch typ {
	case 'S':
		r.ranInBatch = false
	case 'B', 'E':
		r.ranInBatch = true
	}
	return unsettled
}

// serverMessage follows ParameterStatus.
func (r *textReading) serverMessage(m pgwire.Message) {
	if m.Type != 'S' {
		return
	}
	if name, value, err := m.ParameterStatus(); err == nil {
		r.report(name, value)
	}
}

// misread refuses a Query's or Parse's text that the server may read
// differently from the proxy (see the top of this file); nil for any
// other. unsettled: requests sent before it may still change a setting.
func (s *session) misread(sql string, unsettled bool) *pgwire.Refusal {
	scsOff, enc := s.reading.scsOff.Load(), s.reading.encoding.Load()
	if !unsettled && !scsOff && enc == nil {
		return nil
	}
	mentions := s.rules.Mentions(sql)
	const pipelineHint = "wait for the answers to earlier statements before sending this one (they may change standard_conforming_strings or client_encoding)"
	if enc != nil && mentions {
		return s.refuseEncoding(*enc, "client_encoding is client-only")
	}
	if (enc != nil || unsettled) && hasNonASCII(sql) && (mentions || extract.MayHideEffects(sql)) {
		if enc != nil {
			return s.refuseEncoding(*enc, "client_encoding is client-only and the text is not ASCII")
		}
		return s.refuseReading("it holds non-ASCII bytes and statements sent before it, not yet answered, may have changed client_encoding",
			pipelineHint, "the text is not ASCII and client_encoding may be changing")
	}
	if (scsOff || unsettled) && strings.IndexByte(sql, '\\') >= 0 && (mentions || extract.MayHideEffects(sql)) {
		if scsOff {
			return s.refuseReading("standard_conforming_strings is off, so the server reads a backslash in a '...' string as an escape, and the statement holds a backslash",
				"SET standard_conforming_strings = on (PostgreSQL's default; write escapes as E'...' strings), or RESET standard_conforming_strings",
				"standard_conforming_strings is off and the text holds a backslash")
		}
		return s.refuseReading("it holds a backslash and statements sent before it, not yet answered, may have turned standard_conforming_strings off",
			pipelineHint, "the text holds a backslash and standard_conforming_strings may be changing")
	}
	return nil
}

// convertedParameters refuses the execution of a write to a configured
// table, prepared earlier, while client_encoding is client-only: the
// server converts its text parameters before storing them, and the tags
// would be of the bytes as sent.
func (s *session) convertedParameters(pt *portal) *pgwire.Refusal {
	enc := s.reading.encoding.Load()
	if enc == nil || len(pt.stmt.analyses) == 0 {
		return nil
	}
	return s.refuseEncoding(*enc, "client_encoding is client-only")
}

// refuseEncoding refuses a statement while client_encoding is enc, a
// client-only encoding.
func (s *session) refuseEncoding(enc, logReason string) *pgwire.Refusal {
	return s.refuseReading("client_encoding is "+enc+", whose characters may hold bytes the proxy would read as quotes or backslashes",
		encodingHint, logReason)
}

const encodingHint = "SET client_encoding = 'UTF8' (the server converts text to and from it) to write configured tables through the proxy"

// refuseReading refuses a statement the server may read differently;
// logReason says why without quoting it. The texts are ASCII: the error is
// raised by a statement the server reads in the client's encoding.
func (s *session) refuseReading(why, hint, logReason string) *pgwire.Refusal {
	return wireRefusal(s.capture.RefuseUnattributed(
		"lethe: statement refused because the proxy could read it differently from the server: "+why, hint, logReason))
}

// hasNonASCII reports whether s holds a byte ≥ 0x80.
func hasNonASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return true
		}
	}
	return false
}
