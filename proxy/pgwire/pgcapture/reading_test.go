package pgcapture

import (
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/capture"
	"github.com/lethe-privacy/lethe/proxy/pgwire"
)

func status(name, value string) *pgproto3.ParameterStatus {
	return &pgproto3.ParameterStatus{Name: name, Value: value}
}

// step is one request and the server's answers to it; refused says
// whether capture must refuse it.
type step struct {
	sql     string
	refused bool
	answers []pgproto3.BackendMessage
}

// playSteps sends each step's Query and its answers in turn, and checks
// which were refused (a refused Query is answered by the error of the
// statement raised in its place).
func playSteps(t *testing.T, c *conversation, steps []step) {
	t.Helper()
	for _, st := range steps {
		before := len(c.refusals)
		c.client(query(st.sql))
		if st.refused {
			require.Equal(t, before+1, len(c.refusals), "not refused: %s", st.sql)
			assert.Equal(t, capture.CodeUnattributed, c.refusals[before])
			c.server(failed, ready('I'))
			continue
		}
		require.Equal(t, before, len(c.refusals), "refused: %s", st.sql)
		c.server(st.answers...)
	}
}

var inserted = []pgproto3.BackendMessage{done("INSERT 0 1"), ready('I')}

// With standard_conforming_strings off the server reads a backslash in
// '…' as an escape, so the probe's first string ends where the proxy's
// parser reads an escaped quote: a text with a backslash that names a
// configured table (or may hide a statement capture follows) is refused
// until the setting is on again; text without a backslash reads the same
// in both modes.
func TestSession_StandardConformingStringsOffRefusesTextItCouldMisread(t *testing.T) {
	s, l := memSession(t, capture.Strict)
	c := &conversation{t: t, s: s}
	playSteps(t, c, []step{
		{sql: "SET standard_conforming_strings = off", answers: []pgproto3.BackendMessage{done("SET"), status("standard_conforming_strings", "off"), ready('I')}},
		{sql: `select 'x\''; insert into docs (id, user_id) values ('h1', 'ann'); select 1 --'`, refused: true},
		{sql: `INSERT INTO docs (id, user_id) VALUES ('h2', 'a\'b')`, refused: true},
		{sql: `select 'x\''; commit; select '`, refused: true},                                   // a hidden COMMIT
		{sql: `set search_path = other, 'x\''`, refused: true},                                   // a path the proxy cannot read
		{sql: `SELECT 'a\'b'`, answers: []pgproto3.BackendMessage{done("SELECT 1"), ready('I')}}, // nothing capture follows
		{sql: "INSERT INTO docs (id, user_id) VALUES ('p1', 'ann')", answers: inserted},
		{sql: "RESET standard_conforming_strings", answers: []pgproto3.BackendMessage{done("RESET"), status("standard_conforming_strings", "on"), ready('I')}},
		{sql: `INSERT INTO docs (id, user_id) VALUES ('p2', 'a\b')`, answers: inserted},
	})
	assert.Equal(t, []string{"public.docs/p1", "public.docs/p2"}, confirmedAfter(s, l))
}

// A Parse is read when the server gets it: refused while the setting is
// off, and so are the Bind and Execute of the statement it named.
func TestSession_StandardConformingStringsOffRefusesParseAndItsExecutions(t *testing.T) {
	s, l := memSession(t, capture.Strict)
	s.reading.start(map[string]string{"standard_conforming_strings": "off"})
	c := &conversation{t: t, s: s}
	c.client(&pgproto3.Parse{Name: "ins", Query: `INSERT INTO docs (id, user_id) VALUES ($1, 'a\')`})
	c.client(&pgproto3.Bind{PreparedStatement: "ins", Parameters: [][]byte{[]byte("x1")}}, &pgproto3.Execute{}, &pgproto3.Sync{})
	assert.Equal(t, []string{capture.CodeUnattributed, capture.CodeUnattributed}, c.refusals, "the Parse and the Execute")
	c.server(failed, ready('I'))
	assert.Empty(t, confirmedAfter(s, l))
}

// The server reports a change before the ReadyForQuery of the request
// that made it; a statement sent before that arrives may be read under
// the new setting, whatever the earlier requests' text says (a function
// may call set_config).
func TestSession_TextSentBeforeTheAnswersIsReadAsIfSettingsMayHaveChanged(t *testing.T) {
	s, l := memSession(t, capture.Strict)
	c := &conversation{t: t, s: s}
	c.client(query("SELECT app.prepare_session()")) // may SET standard_conforming_strings = off
	c.client(query(`INSERT INTO docs (id, user_id) VALUES ('x1', 'a\''); INSERT INTO docs (id, user_id) VALUES ('x2', 'b')`))
	c.client(query("INSERT INTO docs (id, user_id) VALUES ('x3', 'Zoë')"))
	c.client(query("INSERT INTO docs (id, user_id) VALUES ('x4', 'ann')")) // ASCII, no backslash: read alike
	c.client(query(`SELECT 'a\'`))                                         // nothing capture follows
	assert.Equal(t, []string{capture.CodeUnattributed, capture.CodeUnattributed}, c.refusals)
	c.server(done("SELECT 1"), status("standard_conforming_strings", "off"), ready('I'))
	c.server(failed, ready('I'), failed, ready('I'), done("INSERT 0 1"), ready('I'), done("SELECT 1"), ready('I'))

	// In one batch, an Execute runs before the Parse after it is read.
	c.refusals = nil
	c.client(query("RESET standard_conforming_strings"))
	c.server(done("RESET"), status("standard_conforming_strings", "on"), ready('I'))
	c.client(&pgproto3.Parse{Query: "SELECT app.prepare_session()"}, &pgproto3.Bind{}, &pgproto3.Execute{})
	c.client(&pgproto3.Parse{Name: "ins", Query: `INSERT INTO docs (id, user_id) VALUES ($1, 'a\')`}, &pgproto3.Sync{})
	assert.Equal(t, []string{capture.CodeUnattributed}, c.refusals)
	c.server(&pgproto3.ParseComplete{}, &pgproto3.BindComplete{}, done("SELECT 1"), failed, ready('I'))
	c.refusals = nil
	c.client(&pgproto3.Parse{Name: "ins2", Query: `INSERT INTO docs (id, user_id) VALUES ($1, 'a\')`}, &pgproto3.Sync{})
	c.client(&pgproto3.Bind{PreparedStatement: "ins2", Parameters: [][]byte{[]byte("p1")}}, &pgproto3.Execute{}, &pgproto3.Sync{})
	assert.Empty(t, c.refusals, "settled and on: read alike")
	c.server(&pgproto3.ParseComplete{}, ready('I'), &pgproto3.BindComplete{}, done("INSERT 0 1"), ready('I'))
	assert.Equal(t, []string{"public.docs/p1", "public.docs/x4"}, confirmedAfter(s, l))
}

// In a client-only encoding the server converts text before reading it,
// and a character's second byte may be a backslash: every write to a
// configured table is refused (its parameters are converted too), and a
// non-ASCII text that may hide a statement capture follows.
func TestSession_ClientOnlyEncodingRefusesWritesToConfiguredTables(t *testing.T) {
	s, l := memSession(t, capture.Strict)
	s.reading.start(map[string]string{"client_encoding": "UTF8", "standard_conforming_strings": "on"})
	c := &conversation{t: t, s: s}
	sjisSelect := "select E'\x95\\'; insert into docs (id, user_id) values ('h1', 'ann'); select 1 --'"
	playSteps(t, c, []step{
		{sql: "SET client_encoding = 'SJIS'", answers: []pgproto3.BackendMessage{done("SET"), status("client_encoding", "SJIS"), ready('I')}},
		{sql: sjisSelect, refused: true},
		{sql: "INSERT INTO docs (id, user_id) VALUES ('h2', 'ann')", refused: true},
		{sql: "select E'\x95\\'; commit; select '", refused: true},
		{sql: "SELECT '\x95\x5c'", answers: []pgproto3.BackendMessage{done("SELECT 1"), ready('I')}}, // nothing capture follows
		{sql: "SET client_encoding = 'UTF8'", answers: []pgproto3.BackendMessage{done("SET"), status("client_encoding", "UTF8"), ready('I')}},
		{sql: "INSERT INTO docs (id, user_id) VALUES ('p1', 'ann')", answers: inserted},
	})
	assert.Equal(t, []string{"public.docs/p1"}, confirmedAfter(s, l))
}

// A statement prepared before the change is refused at Execute: its text
// parameters are converted too.
func TestSession_ClientOnlyEncodingRefusesStatementsPreparedBefore(t *testing.T) {
	s, l := memSession(t, capture.Strict)
	c := &conversation{t: t, s: s}
	c.client(&pgproto3.Parse{Name: "ins", Query: "INSERT INTO docs (id, user_id) VALUES ($1, $2)"}, &pgproto3.Sync{})
	c.server(&pgproto3.ParseComplete{}, ready('I'))
	c.client(query("SET client_encoding = 'BIG5'")).server(done("SET"), status("client_encoding", "BIG5"), ready('I'))
	c.client(&pgproto3.Bind{PreparedStatement: "ins", Parameters: [][]byte{[]byte("h1"), []byte("\xa5\x5c")}}, &pgproto3.Execute{}, &pgproto3.Sync{})
	assert.Equal(t, []string{capture.CodeUnattributed}, c.refusals)
	c.server(failed, ready('I'))
	assert.Empty(t, confirmedAfter(s, l))
}

func TestUnsafeEncoding_KnowsTheClientOnlyEncodingsAndTheirAliases(t *testing.T) {
	for _, e := range []string{"SJIS", "sjis", "Shift_JIS", "SHIFT_JIS_2004", "BIG5", "GBK", "UHC", "GB18030", "JOHAB", "WIN932", "WIN950", "WIN936", "WIN949"} {
		assert.True(t, unsafeEncoding(e), e)
	}
	for _, e := range []string{"UTF8", "utf-8", "LATIN1", "EUC_JP", "EUC_CN", "WIN1252", "SQL_ASCII", "MULE_INTERNAL"} {
		assert.False(t, unsafeEncoding(e), e)
	}
}

// The fast path: settled, PostgreSQL's defaults, nothing to look at.
func TestSession_MisreadCostsNothingInTheDefaultSettings(t *testing.T) {
	s, _ := memSession(t, capture.Strict)
	defer s.capture.Close()
	q := `INSERT INTO docs (id, user_id) VALUES ('a', 'b\')`
	ready := []byte{'I'}
	allocs := testing.AllocsPerRun(100, func() {
		unsettled := s.reading.clientMessage('Q', false)
		if s.misread(q, unsettled) != nil {
			t.Fatal("refused")
		}
		s.reading.serverMessage(pgwire.Message{Type: 'Z', Body: ready})
	})
	assert.Zero(t, allocs)
}

// The refusal is raised by a statement the server reads in the client's
// encoding, which may be SJIS while standard_conforming_strings is off:
// its texts must read the same in every encoding.
func TestSession_ReadingRefusalsAreASCII(t *testing.T) {
	s, _ := memSession(t, capture.Strict)
	defer s.capture.Close()
	ascii := func(r *pgwire.Refusal) {
		t.Helper()
		require.NotNil(t, r)
		for _, text := range []string{r.Message, r.Hint} {
			assert.False(t, hasNonASCII(text), text)
		}
	}
	s.reading.start(map[string]string{"standard_conforming_strings": "off"})
	ascii(s.misread(`INSERT INTO docs (id, user_id) VALUES ('a', 'b\')`, false))
	ascii(s.misread(`INSERT INTO docs (id, user_id) VALUES ('a', 'b\')`, true))
	s.reading.start(map[string]string{"standard_conforming_strings": "on", "client_encoding": "SJIS"})
	ascii(s.misread(`INSERT INTO docs (id, user_id) VALUES ('a', 'b')`, false))
	ascii(s.misread("SELECT 'x\x95\\'; COMMIT", false))
	s.reading.start(map[string]string{"client_encoding": "UTF8"})
	ascii(s.misread("INSERT INTO docs (id, user_id) VALUES ('a', 'Zoë')", true))
}
