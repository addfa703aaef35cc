package pgwire

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// knownBug skips a test whose failure err is a reported, not yet fixed bug
// in non-test code. Once the bug is fixed err is nil and the test guards
// against regressions like any other.
func knownBug(t *testing.T, bug string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("BUG (%s): %v", bug, err)
	}
}

// dollarTag matches a dollar-quote delimiter as PostgreSQL's scanner does
// (dolqdelim in scan.l, ASCII part).
var dollarTag = regexp.MustCompile(`^\$(?:[A-Za-z_][A-Za-z0-9_]*)?\$`)

// dollarQuoted reads a dollar-quoted literal at the start of s the way
// PostgreSQL does: the literal ends at the first occurrence of its opening
// delimiter. It returns the tag, the literal's text and what follows.
func dollarQuoted(s string) (tag, text, rest string, err error) {
	tag = dollarTag.FindString(s)
	if tag == "" {
		return "", "", "", fmt.Errorf("no dollar-quote delimiter at %.20q", s)
	}
	s = s[len(tag):]
	end := strings.Index(s, tag)
	if end < 0 {
		return "", "", "", fmt.Errorf("unterminated %s literal", tag)
	}
	return tag, s[:end], s[end+len(tag):], nil
}

// parseRaise takes a statement made by raiseStatement apart with
// PostgreSQL's quoting rules and returns the fields it would raise.
func parseRaise(stmt string) (Refusal, error) {
	var r Refusal
	rest, ok := strings.CutPrefix(stmt, "DO ")
	if !ok {
		return r, fmt.Errorf("not a DO statement: %.20q", stmt)
	}
	outer, body, after, err := dollarQuoted(rest)
	if err != nil {
		return r, err
	}
	if strings.TrimSpace(after) != "" {
		return r, fmt.Errorf("the DO block's %s literal ends early; SQL follows it: %q", outer, after)
	}
	body, ok = strings.CutPrefix(body, "BEGIN RAISE EXCEPTION USING ERRCODE = '")
	if !ok || len(body) < 6 || body[5] != '\'' {
		return r, fmt.Errorf("body does not start with RAISE ... ERRCODE = '.....': %q", body)
	}
	r.Code, body = body[:5], body[6:]
	seen := map[string]bool{}
	for {
		var found bool
		if body, found = strings.CutPrefix(body, ", "); !found {
			break
		}
		name, value, found := strings.Cut(body, " = ")
		if !found {
			return r, fmt.Errorf("option without value: %q", body)
		}
		tag, text, after, err := dollarQuoted(value)
		if err != nil {
			return r, fmt.Errorf("%s: %w", name, err)
		}
		if tag == outer {
			return r, fmt.Errorf("%s is quoted with the DO block's own tag %s", name, tag)
		}
		if seen[name] {
			return r, fmt.Errorf("%s given twice", name)
		}
		seen[name] = true
		switch name {
		case "MESSAGE":
			r.Message = text
		case "DETAIL":
			r.Detail = text
		case "HINT":
			r.Hint = text
		default:
			return r, fmt.Errorf("unexpected option %q", name)
		}
		body = after
	}
	if strings.TrimSpace(body) != "; END" {
		return r, fmt.Errorf("body does not end with '; END ': %q", body)
	}
	return r, nil
}

func TestRaiseStatement_IsAValidDOBlockWhateverTheText(t *testing.T) {
	cases := []struct {
		name     string
		refusal  Refusal
		knownBug string
	}{
		{name: "plain message", refusal: Refusal{Code: "LT000", Message: "refused by policy"}},
		{name: "every field", refusal: Refusal{Code: "42501", Message: "m", Detail: "d", Hint: "h"}},
		{name: "hint without detail", refusal: Refusal{Code: "LT001", Message: "m", Hint: "h"}},
		{name: "single quotes and backslashes", refusal: Refusal{Code: "LT000",
			Message: `it's 'quoted' \ and \' and ''`, Detail: `C:\path\`, Hint: `E'\x41'`}},
		{name: "newlines and tabs", refusal: Refusal{Code: "LT000", Message: "line 1\nline 2\r\n\tend", Detail: "\n"}},
		{name: "the DO block's tag", refusal: Refusal{Code: "LT000", Message: "$lethe_do0$"}},
		{name: "the DO block's next tags", refusal: Refusal{Code: "LT000", Message: "$lethe_do0$ $lethe_do1$", Detail: "$lethe_do2$"}},
		{name: "the field tags", refusal: Refusal{Code: "LT000", Message: "$lethe_s0$", Detail: "$lethe_s0$$lethe_s1$", Hint: "$lethe_s1$"}},
		{name: "closing the block and injecting SQL", refusal: Refusal{Code: "LT000",
			Message: "x$lethe_s0$; END $lethe_do0$; DROP TABLE users; --"}},
		{name: "other dollar signs", refusal: Refusal{Code: "LT000", Message: "$1 $$ $ $a$ a$ $", Detail: "$", Hint: "$$"}},
		{name: "text ending in a field tag without its last dollar", refusal: Refusal{Code: "LT000", Message: "ends with $lethe_s0"}},
		{name: "unicode", refusal: Refusal{Code: "LT000", Message: "naïve — 日本語 🙅"}},
		{name: "text starting with the DO block's tag without its first dollar", refusal: Refusal{Code: "LT000",
			Message: "lethe_do0$; SELECT 1; --"},
			knownBug: "the opening field tag's closing $ and the text form $lethe_do0$, which ends the DO literal early (PostgreSQL: 42601 syntax error)"},
		{name: "text ending in the DO block's tag without its last dollar", refusal: Refusal{Code: "LT000",
			Message: "m", Detail: "ends with $lethe_do0"},
			knownBug: "the text and the closing field tag's $ form $lethe_do0$, which ends the DO literal early (PostgreSQL: 42601 syntax error)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			stmt := raiseStatement(&tc.refusal)
			got, err := parseRaise(stmt)
			if tc.knownBug != "" {
				knownBug(t, tc.knownBug, err)
			}
			require.NoError(t, err, "statement: %s", stmt)
			assert.Equal(t, tc.refusal, got, "statement: %s", stmt)
		})
	}
}

func TestNormalizeRefusal(t *testing.T) {
	const defaultMessage = "lethe-proxy refused this statement"
	cases := []struct {
		name string
		in   Refusal
		want Refusal
	}{
		{"valid code and message kept", Refusal{Code: "42501", Message: "no", Detail: "d", Hint: "h"}, Refusal{Code: "42501", Message: "no", Detail: "d", Hint: "h"}},
		{"custom class kept", Refusal{Code: "LT123", Message: "no"}, Refusal{Code: "LT123", Message: "no"}},
		{"empty code", Refusal{Message: "no"}, Refusal{Code: "LT000", Message: "no"}},
		{"lower case code", Refusal{Code: "lt001", Message: "no"}, Refusal{Code: "LT000", Message: "no"}},
		{"four characters", Refusal{Code: "4250", Message: "no"}, Refusal{Code: "LT000", Message: "no"}},
		{"six characters", Refusal{Code: "425011", Message: "no"}, Refusal{Code: "LT000", Message: "no"}},
		{"punctuation", Refusal{Code: "42'01", Message: "no"}, Refusal{Code: "LT000", Message: "no"}},
		{"non-ASCII of five bytes", Refusal{Code: "4é01", Message: "no"}, Refusal{Code: "LT000", Message: "no"}},
		{"empty message", Refusal{Code: "42501"}, Refusal{Code: "42501", Message: defaultMessage}},
		{"nothing at all", Refusal{}, Refusal{Code: "LT000", Message: defaultMessage}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.in
			got := normalizeRefusal(&in)
			assert.Equal(t, tc.want, *got)
			assert.Equal(t, tc.in, in, "the caller's Refusal was modified")
		})
	}
}

// frames splits a byte stream into (type, declared length, body) frames.
type frame struct {
	typ    byte
	length int
	body   []byte
}

func frames(t *testing.T, b []byte) []frame {
	t.Helper()
	var out []frame
	for len(b) > 0 {
		require.GreaterOrEqual(t, len(b), headerLen, "truncated header")
		length := int(binary.BigEndian.Uint32(b[1:]))
		require.GreaterOrEqual(t, length, 4)
		require.LessOrEqual(t, 1+length, len(b), "length runs past the end")
		out = append(out, frame{b[0], length, b[headerLen : 1+length]})
		b = b[1+length:]
	}
	return out
}

func TestRaiseExtended_IsParseBindExecuteFlush(t *testing.T) {
	for _, r := range []Refusal{
		{Code: "LT000", Message: "refused"},
		{Code: "42501", Message: "it's $lethe_do0$", Detail: "d\n", Hint: "h"},
	} {
		t.Run(r.Message, func(t *testing.T) {
			b := raiseExtended(&r)

			fs := frames(t, b)
			require.Len(t, fs, 4)
			for i, typ := range []byte("PBEH") {
				assert.Equal(t, typ, fs[i].typ, "message %d", i)
				assert.Equal(t, 4+len(fs[i].body), fs[i].length)
			}

			// An independent decoder sees the same four messages and nothing more.
			be := pgproto3.NewBackend(bytes.NewReader(b), io.Discard)
			m, err := be.Receive()
			require.NoError(t, err)
			require.IsType(t, &pgproto3.Parse{}, m)
			assert.Equal(t, pgproto3.Parse{Name: "", Query: raiseStatement(&r)}, *m.(*pgproto3.Parse))

			m, err = be.Receive()
			require.NoError(t, err)
			require.IsType(t, &pgproto3.Bind{}, m)
			bind := m.(*pgproto3.Bind)
			assert.Empty(t, bind.DestinationPortal)
			assert.Empty(t, bind.PreparedStatement)
			assert.Empty(t, bind.ParameterFormatCodes)
			assert.Empty(t, bind.Parameters)
			assert.Empty(t, bind.ResultFormatCodes)

			m, err = be.Receive()
			require.NoError(t, err)
			require.IsType(t, &pgproto3.Execute{}, m)
			assert.Equal(t, pgproto3.Execute{}, *m.(*pgproto3.Execute))

			m, err = be.Receive()
			require.NoError(t, err)
			require.IsType(t, &pgproto3.Flush{}, m)

			_, err = be.Receive()
			require.Error(t, err, "bytes after Flush")
		})
	}
}

// errorBody is an ErrorResponse body with the given fields, in pgproto3's
// encoding (severity first, as the server sends it).
func errorBody(t *testing.T, code, message string) []byte {
	t.Helper()
	b, err := (&pgproto3.ErrorResponse{Severity: "ERROR", SeverityUnlocalized: "ERROR", Code: code, Message: message,
		Where: "PL/pgSQL function inline_code_block line 1 at RAISE"}).Encode(nil)
	require.NoError(t, err)
	return b[headerLen:]
}

// filterStep is one server message given to refusals.filter and what
// filter must answer.
type filterStep struct {
	typ        byte
	body       []byte
	epoch      int64
	wantPrefix []byte
	wantDrop   bool
	wantPass   bool
}

func TestRefusals_Filter(t *testing.T) {
	const code, message = "LT000", "refused by policy"
	parseComplete := []byte{'1', 0, 0, 0, 4}
	bindComplete := []byte{'2', 0, 0, 0, 4}
	ours := errorBody(t, code, message)
	hold := func(typ byte) filterStep { return filterStep{typ: typ, wantDrop: true, wantPass: false} }
	pass := func(typ byte, body []byte, released ...[]byte) filterStep {
		s := filterStep{typ: typ, body: body, wantPass: true}
		if len(released) > 0 {
			s.wantPrefix = bytes.Join(released, nil)
		}
		return s
	}
	inEpoch := func(s filterStep, epoch int64) filterStep { s.epoch = epoch; return s }
	// replaced is our ErrorResponse: it reaches the Observer as it is and
	// the client, after released, without server context.
	replaced := func(body []byte, released ...[]byte) filterStep {
		return filterStep{typ: 'E', body: body, wantPass: true, wantDrop: true,
			wantPrefix: append(bytes.Join(released, nil), withoutServerContext(body)...)}
	}

	cases := []struct {
		name        string
		injections  []injection
		steps       []filterStep
		wantPending int32
	}{
		{
			name:        "completions before our error are removed",
			injections:  []injection{{epoch: 0, code: code, message: message}},
			steps:       []filterStep{hold('1'), hold('2'), replaced(ours)},
			wantPending: 0,
		},
		{
			name:       "after our error nothing more is filtered",
			injections: []injection{{epoch: 0, code: code, message: message}},
			steps: []filterStep{hold('1'), hold('2'), replaced(ours),
				pass('1', nil), pass('2', nil), pass('E', ours), pass('Z', []byte("E"))},
			wantPending: 0,
		},
		{
			name:        "held completions are released before another message",
			injections:  []injection{{epoch: 0, code: code, message: message}},
			steps:       []filterStep{hold('1'), hold('2'), pass('C', []byte("SELECT 1\x00"), parseComplete, bindComplete)},
			wantPending: 1,
		},
		{
			name:        "held completions are released before an error that is not ours",
			injections:  []injection{{epoch: 0, code: code, message: message}},
			steps:       []filterStep{hold('1'), hold('2'), pass('E', errorBody(t, "42P01", "relation does not exist"), parseComplete, bindComplete)},
			wantPending: 1,
		},
		{
			name:        "an error with our code but another message is not ours",
			injections:  []injection{{epoch: 0, code: code, message: message}},
			steps:       []filterStep{hold('1'), hold('2'), pass('E', errorBody(t, code, "other"), parseComplete, bindComplete)},
			wantPending: 1,
		},
		{
			name:        "an error with our message but another code is not ours",
			injections:  []injection{{epoch: 0, code: code, message: message}},
			steps:       []filterStep{hold('1'), hold('2'), pass('E', errorBody(t, "P0001", message), parseComplete, bindComplete)},
			wantPending: 1,
		},
		{
			name:       "the application's completions before ours are released in order",
			injections: []injection{{epoch: 0, code: code, message: message}},
			// The application's Parse, Bind went through; its Execute was refused.
			steps:       []filterStep{hold('1'), hold('2'), {typ: '1', wantPrefix: msgs(parseComplete, bindComplete), wantDrop: true}, hold('2'), replaced(ours)},
			wantPending: 0,
		},
		{
			name:       "the application's ParseComplete before our Parse is released",
			injections: []injection{{epoch: 0, code: code, message: message}},
			// The application's Parse went through; its Bind was refused.
			steps:       []filterStep{hold('1'), {typ: '1', wantPrefix: parseComplete, wantDrop: true}, hold('2'), replaced(ours)},
			wantPending: 0,
		},
		{
			name:        "BindComplete without ParseComplete passes",
			injections:  []injection{{epoch: 0, code: code, message: message}},
			steps:       []filterStep{pass('2', nil), hold('1'), hold('2'), replaced(ours)},
			wantPending: 0,
		},
		{
			name:        "ReadyForQuery releases held completions",
			injections:  []injection{{epoch: 0, code: code, message: message}},
			steps:       []filterStep{hold('1'), pass('Z', []byte("I"), parseComplete)},
			wantPending: 1, // expire, not filter, forgets it
		},
		{
			name:        "nothing pending passes everything",
			steps:       []filterStep{pass('1', nil), pass('2', nil), pass('E', ours), pass('Z', []byte("I"))},
			wantPending: 0,
		},
		{
			name:       "another epoch passes everything",
			injections: []injection{{epoch: 3, code: code, message: message}},
			steps: []filterStep{inEpoch(pass('1', nil), 2), inEpoch(pass('2', nil), 2), inEpoch(pass('E', ours), 2),
				inEpoch(pass('1', nil), 4)},
			wantPending: 1,
		},
		{
			name:        "a Query injection's error is replaced, nothing is held",
			injections:  []injection{{epoch: 0, code: code, message: message, simple: true}},
			steps:       []filterStep{pass('1', nil), pass('E', errorBody(t, "42P01", "other")), replaced(ours), pass('E', ours), pass('Z', []byte("E"))},
			wantPending: 0,
		},
		{
			name: "a Query injection after an extended one is matched after it",
			injections: []injection{
				{epoch: 0, code: code, message: "first"},
				{epoch: 0, code: code, message: "second", simple: true},
			},
			steps: []filterStep{
				hold('1'), hold('2'), replaced(errorBody(t, code, "first")),
				pass('1', nil), replaced(errorBody(t, code, "second")),
			},
			wantPending: 0,
		},
		{
			name: "injections are matched in order",
			injections: []injection{
				{epoch: 0, code: code, message: "first"},
				{epoch: 0, code: code, message: "second"},
			},
			steps: []filterStep{
				hold('1'), hold('2'), pass('E', errorBody(t, code, "second"), parseComplete, bindComplete),
				hold('1'), hold('2'), replaced(errorBody(t, code, "first")),
				hold('1'), hold('2'), replaced(errorBody(t, code, "second")),
			},
			wantPending: 0,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var q refusals
			for _, in := range tc.injections {
				q.add(in)
			}
			for i, s := range tc.steps {
				v, pass := q.filter(s.typ, s.body, s.epoch)
				assert.Equal(t, s.wantPass, pass, "step %d (%q): pass", i, s.typ)
				assert.Equal(t, s.wantDrop, v.drop, "step %d (%q): drop", i, s.typ)
				assert.Equal(t, s.wantPrefix, v.prefix, "step %d (%q): prefix", i, s.typ)
			}
			assert.Equal(t, tc.wantPending, q.pending.Load())
		})
	}
}

func TestRefusals_Expire(t *testing.T) {
	var q refusals
	q.add(injection{epoch: 0, code: "LT000", message: "a"})
	q.add(injection{epoch: 0, code: "LT000", message: "b"})
	q.add(injection{epoch: 2, code: "LT000", message: "c"})

	q.expire(0)
	assert.Equal(t, int32(3), q.pending.Load(), "expire(0) dropped injections of epoch 0")

	q.filter('1', nil, 0) // held when the batch ends
	// The batch's ReadyForQuery passes filter first (as in fromServer),
	// which hands the held ParseComplete back before it.
	v, pass := q.filter('Z', []byte{'I'}, 0)
	assert.True(t, pass)
	assert.Equal(t, []byte{'1', 0, 0, 0, 4}, v.prefix)
	q.expire(1)
	assert.Equal(t, int32(1), q.pending.Load())
	require.Len(t, q.queue, 1)
	assert.Equal(t, "c", q.queue[0].message)
	assert.Empty(t, q.held, "held bytes survive the end of their batch")

	// Epoch 1 has nothing pending: everything passes.
	v, pass = q.filter('1', nil, 1)
	assert.True(t, pass)
	assert.Equal(t, verdict{}, v)

	q.expire(3)
	assert.Equal(t, int32(0), q.pending.Load())
	assert.Empty(t, q.queue)
}

// nopSession is an Observer session that refuses nothing.
type nopSession struct{}

func (nopSession) ClientMessage(Message) *Refusal { return nil }
func (nopSession) ServerMessage(Message)          {}
func (nopSession) Close()                         {}

func testSession() *session {
	ss := &session{obs: nopSession{}, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	ss.txStatus.Store('I')
	return ss
}

func TestSessionRefuse_ReplacesMessageByType(t *testing.T) {
	r := &Refusal{Code: "42501", Message: "no access to users.ssn"}
	cases := []struct {
		typ         byte
		wantPrefix  []byte
		wantDrop    bool
		wantPending int32
	}{
		{'Q', msg('Q', append([]byte(raiseStatement(r)), 0)), true, 1},
		{'P', raiseExtended(r), true, 1},
		{'B', raiseExtended(r), true, 1},
		{'E', raiseExtended(r), true, 1},
		{'d', msg('f', []byte(r.Message+"\x00")), true, 0},
		{'c', msg('f', []byte(r.Message+"\x00")), true, 0},
		{'S', raiseExtended(r), false, 1}, // the error before the Sync, which still goes
		{'C', nil, false, 0},
	}
	for _, tc := range cases {
		t.Run(string(tc.typ), func(t *testing.T) {
			ss := testSession()
			ss.sent.Store(7)
			v := ss.refuse(tc.typ, r)
			assert.Equal(t, tc.wantPrefix, v.prefix)
			assert.Equal(t, tc.wantDrop, v.drop)
			assert.Equal(t, tc.wantPending, ss.refusals.pending.Load())
			if tc.wantPending > 0 {
				assert.Equal(t, injection{epoch: 7, code: r.Code, message: r.Message, simple: tc.typ == 'Q'}, ss.refusals.queue[0])
			}
		})
	}
}

// TestSession_RemovesInjectedCompletionsWithoutReordering runs the server
// side of a session through a pump: the application pipelined
// Parse/Bind/Execute of a query (allowed) and then a Parse that the
// Observer refused, all before one Sync.
func TestSession_RemovesInjectedCompletionsWithoutReordering(t *testing.T) {
	const code, message = "LT000", "refused"
	ours := errorBody(t, code, message)
	appRows := msgs(msg('D', []byte("\x00\x01\x00\x00\x00\x011")), msg('C', []byte("SELECT 1\x00")))
	cases := []struct {
		name     string
		server   []byte
		want     []byte
		knownBug string
	}{
		{
			name:   "only the injection is answered",
			server: msgs(msg('1', nil), msg('2', nil), msg('E', ours), msg('Z', []byte("E"))),
			want:   msgs(withoutServerContext(ours), msg('Z', []byte("E"))),
		},
		{
			name:   "the application's Parse and Bind are answered first",
			server: msgs(msg('1', nil), msg('2', nil), msg('C', []byte("SELECT 1\x00")), msg('1', nil), msg('2', nil), msg('E', ours), msg('Z', []byte("E"))),
			want:   msgs(msg('1', nil), msg('2', nil), msg('C', []byte("SELECT 1\x00")), withoutServerContext(ours), msg('Z', []byte("E"))),
		},
		{
			name:     "the application's query returns rows before the injection is answered",
			server:   msgs(msg('1', nil), msg('2', nil), appRows, msg('1', nil), msg('2', nil), msg('E', ours), msg('Z', []byte("E"))),
			want:     msgs(msg('1', nil), msg('2', nil), appRows, withoutServerContext(ours), msg('Z', []byte("E"))),
			knownBug: "DataRow is not inspected, so it overtakes the held ParseComplete/BindComplete",
		},
	}
	for _, tc := range cases {
		for _, c := range chunkings {
			t.Run(tc.name+"/"+c.name, func(t *testing.T) {
				ss := testSession()
				ss.refusals.add(injection{epoch: 0, code: code, message: message})
				var out bytes.Buffer
				p := newPump(c.r(tc.server), &out, 0)
				p.inspect, p.handle = ss.inspectServer, ss.fromServer
				require.ErrorIs(t, p.run(), io.EOF)
				var err error
				if !bytes.Equal(tc.want, out.Bytes()) {
					err = fmt.Errorf("client got types %q, want %q", frameTypes(t, out.Bytes()), frameTypes(t, tc.want))
				}
				if tc.knownBug != "" {
					knownBug(t, tc.knownBug, err)
				}
				require.NoError(t, err)
				assert.Equal(t, int32(0), ss.refusals.pending.Load())
				assert.Equal(t, int64(1), ss.answered.Load())
			})
		}
	}
}

func frameTypes(t *testing.T, b []byte) string {
	var s []byte
	for _, f := range frames(t, b) {
		s = append(s, f.typ)
	}
	return string(s)
}

func TestErrorField(t *testing.T) {
	server := []byte("SERROR\x00VERROR\x00CLT000\x00Mrefused by policy\x00WPL/pgSQL function inline_code_block line 1 at RAISE\x00Fpl_exec.c\x00L3907\x00Rexec_stmt_raise\x00\x00")
	cases := []struct {
		name  string
		body  []byte
		field byte
		want  string
	}{
		{"code", server, 'C', "LT000"},
		{"message", server, 'M', "refused by policy"},
		{"first field", server, 'S', "ERROR"},
		{"last field", server, 'R', "exec_stmt_raise"},
		{"absent field", server, 'D', ""},
		{"empty value", []byte("C\x00Mm\x00\x00"), 'C', ""},
		{"first of duplicates", []byte("Mone\x00Mtwo\x00\x00"), 'M', "one"},
		{"unterminated last field", []byte("CLT000\x00Mcut"), 'M', "cut"},
		{"one-byte value without terminator", []byte("Mx"), 'M', "x"},
		{"nothing after the type", []byte("M"), 'M', ""},
		{"terminator stops the scan", []byte("\x00Mhidden\x00"), 'M', ""},
		{"empty body", nil, 'M', ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, errorField(tc.body, tc.field))
		})
	}
}

func TestSessionRefuse_LogsTheLogReasonNeverTheMessage(t *testing.T) {
	var logs bytes.Buffer
	ss := testSession()
	ss.log = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	r := &Refusal{
		Code:      "LT001",
		Message:   `refused: syntax error at or near "'secret@example.com'"`,
		Detail:    "INSERT INTO notes VALUES ('secret@example.com')",
		Hint:      "secret hint",
		LogReason: "the statement did not parse",
	}
	for _, typ := range []byte{'Q', 'P', 'S', 'd'} {
		ss.refuse(typ, r)
	}
	ss.refuse('Q', &Refusal{Code: "LT001", Message: "secret@example.com"})
	out := logs.String()
	assert.Contains(t, out, "statement refused")
	assert.Contains(t, out, "code=LT001")
	assert.Contains(t, out, `reason="the statement did not parse"`)
	assert.NotContains(t, out, "secret")
	assert.NotContains(t, out, "INSERT")
}

func TestWithoutServerContext_DropsWhereFileLineRoutineKeepsTheRest(t *testing.T) {
	full, err := (&pgproto3.ErrorResponse{Severity: "ERROR", SeverityUnlocalized: "ERROR", Code: "LT003",
		Message: "refused", Detail: "detail", Hint: "hint", Position: 7, SchemaName: "public",
		Where: "PL/pgSQL function inline_code_block line 1 at RAISE", File: "pl_exec.c", Line: 3911, Routine: "exec_stmt_raise",
		UnknownFields: map[byte]string{'Z': "kept"}}).Encode(nil)
	require.NoError(t, err)

	got := withoutServerContext(full[headerLen:])

	var decoded pgproto3.ErrorResponse
	require.Equal(t, byte('E'), got[0])
	require.Equal(t, len(got)-1, int(binary.BigEndian.Uint32(got[1:headerLen])), "length field")
	require.NoError(t, decoded.Decode(got[headerLen:]))
	assert.Equal(t, pgproto3.ErrorResponse{Severity: "ERROR", SeverityUnlocalized: "ERROR", Code: "LT003",
		Message: "refused", Detail: "detail", Hint: "hint", Position: 7, SchemaName: "public",
		UnknownFields: map[byte]string{'Z': "kept"}}, decoded)
	assert.Equal(t, []byte{'E', 0, 0, 0, 5, 0}, withoutServerContext([]byte{0}), "an empty error stays one")
}
