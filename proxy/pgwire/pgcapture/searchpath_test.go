package pgcapture

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/extract"
)

// playPaths drives a session's trackers with a script of events in wire
// order, starting with search_path "public", and returns the candidate
// search_paths at each "?", as "a,b" per path and " | " between paths
// ("*" is anyPath):
//
//	q:SQL    the client sends one statement (SET, BEGIN, …; "+" for spaces)
//	w        the client sends a statement with no effect (an INSERT)
//	S        Sync, or the end of a simple Query (client)
//	C:TAG    CommandComplete (server); C alone completes with a tag of no interest
//	E        ErrorResponse (server)
//	Z:I      ReadyForQuery with status I, T or E (server)
//	?        the paths the next statement would be resolved under
func playPaths(t *testing.T, script string) []string {
	t.Helper()
	s := &session{reset: []string{"public"}}
	s.tx = newTxTracker(&recorder{}, s.reset)
	var got []string
	for _, ev := range strings.Fields(script) {
		switch {
		case strings.HasPrefix(ev, "q:"):
			e := s.effectOf(strings.ReplaceAll(ev[2:], "+", " "))
			require.False(t, e.none(), "%s has no effect", ev)
			s.tx.Statement(e, nil)
		case ev == "w":
			s.tx.Statement(effect{}, nil)
		case ev == "S":
			s.tx.Sync()
		case ev == "C":
			s.tx.Complete("SET")
		case strings.HasPrefix(ev, "C:"):
			s.tx.Complete(strings.ReplaceAll(ev[2:], "+", " "))
		case ev == "E":
			s.tx.Error()
		case strings.HasPrefix(ev, "Z:"):
			s.tx.Ready(ev[2])
		case ev == "?":
			_, paths := s.tx.candidates()
			got = append(got, showPaths(paths))
		default:
			t.Fatalf("bad event %q", ev)
		}
	}
	return got
}

func showPaths(paths [][]string) string {
	var out []string
	for _, p := range paths {
		if isAnyPath(p) {
			out = append(out, "*")
			continue
		}
		out = append(out, strings.Join(p, ","))
	}
	return strings.Join(out, " | ")
}

// Each statement answered before the next is sent (the common, not
// pipelined, case): the tracked path is exact.
func TestPathTracker_FollowsTransactionsAsPostgreSQLDoes(t *testing.T) {
	const (
		begin    = "q:BEGIN S C Z:T "
		commit   = "q:COMMIT S C:COMMIT Z:I "
		rollback = "q:ROLLBACK S C:ROLLBACK Z:I "
	)
	set := func(path string) string { return "q:SET+search_path+TO+" + path + " S C Z:? " }
	inBlock := func(script string) string { return strings.ReplaceAll(script, "Z:?", "Z:T") }
	idle := func(script string) string { return strings.ReplaceAll(script, "Z:?", "Z:I") }
	tests := []struct {
		name, script string
		want         []string
	}{
		{"a SET outside a transaction lasts",
			idle(set("other")) + "?", []string{"other"}},
		{"a SET in a committed transaction lasts",
			begin + inBlock(set("other")) + "? " + commit + "?", []string{"other", "other"}},
		{"ROLLBACK undoes a SET",
			begin + inBlock(set("other")) + "? " + rollback + "?", []string{"other", "public"}},
		{"ABORT undoes a SET",
			begin + inBlock(set("other")) + "q:ABORT S C:ROLLBACK Z:I ?", []string{"public"}},
		{"SET LOCAL lasts until COMMIT",
			begin + "q:SET+LOCAL+search_path+TO+other S C Z:T ? " + commit + "?", []string{"other", "public"}},
		{"SET LOCAL after SET: COMMIT keeps the SET",
			begin + inBlock(set("a")) + "q:SET+LOCAL+search_path+TO+b S C Z:T ? " + commit + "?", []string{"b", "a"}},
		{"SET after SET LOCAL: COMMIT keeps the SET",
			begin + "q:SET+LOCAL+search_path+TO+b S C Z:T " + inBlock(set("a")) + commit + "?", []string{"a"}},
		{"set_config(…, true) is SET LOCAL",
			begin + "q:SELECT+set_config('search_path',+'other',+true) S C:SELECT+1 Z:T ? " + commit + "?", []string{"other", "public"}},
		{"SET LOCAL outside a block lasts until the implicit transaction ends",
			"q:SET+LOCAL+search_path+TO+other ? S C Z:I ?", []string{"other", "public"}},
		{"ROLLBACK TO SAVEPOINT undoes the SETs after it",
			begin + inBlock(set("a")) + "q:SAVEPOINT+s S C Z:T " + inBlock(set("b")) + "? q:ROLLBACK+TO+SAVEPOINT+s S C:ROLLBACK Z:T ? " + commit + "?",
			[]string{"b", "a", "a"}},
		{"RELEASE keeps the SETs after the savepoint",
			begin + "q:SAVEPOINT+s S C Z:T " + inBlock(set("b")) + "q:RELEASE+s S C Z:T " + commit + "?", []string{"b"}},
		{"ROLLBACK undoes SETs of released savepoints",
			begin + "q:SAVEPOINT+s S C Z:T " + inBlock(set("b")) + "q:RELEASE+s S C Z:T " + rollback + "?", []string{"public"}},
		{"nested savepoints: ROLLBACK TO the outer one undoes the inner ones too",
			begin + inBlock(set("a")) + "q:SAVEPOINT+s1 S C Z:T " + inBlock(set("b")) + "q:SAVEPOINT+s2 S C Z:T " + inBlock(set("c")) +
				"q:ROLLBACK+TO+s2 S C:ROLLBACK Z:T ? q:ROLLBACK+TO+s1 S C:ROLLBACK Z:T ? " + commit + "?",
			[]string{"b", "a", "a"}},
		{"ROLLBACK TO keeps the savepoint for another ROLLBACK TO",
			begin + "q:SAVEPOINT+s S C Z:T " + inBlock(set("b")) + "q:ROLLBACK+TO+s S C:ROLLBACK Z:T " + inBlock(set("c")) +
				"q:ROLLBACK+TO+s S C:ROLLBACK Z:T ?",
			[]string{"public"}},
		{"a savepoint name reused: ROLLBACK TO goes to the innermost",
			begin + "q:SAVEPOINT+s S C Z:T " + inBlock(set("a")) + "q:SAVEPOINT+s S C Z:T " + inBlock(set("b")) +
				"q:ROLLBACK+TO+s S C:ROLLBACK Z:T ? q:RELEASE+s S C Z:T q:ROLLBACK+TO+s S C:ROLLBACK Z:T ?",
			[]string{"a", "public"}},
		{"SET LOCAL in a released savepoint still ends with the transaction",
			begin + inBlock(set("a")) + "q:SAVEPOINT+s S C Z:T q:SET+LOCAL+search_path+TO+b S C Z:T q:RELEASE+s S C Z:T ? " + commit + "?",
			[]string{"b", "a"}},
		{"ROLLBACK TO after an error recovers the block and undoes the SETs after the savepoint",
			begin + "q:SAVEPOINT+s S C Z:T " + inBlock(set("b")) + "w S E Z:E q:ROLLBACK+TO+s S C:ROLLBACK Z:T ?", []string{"public"}},
		{"COMMIT of an aborted transaction answers ROLLBACK and undoes the SET",
			begin + inBlock(set("other")) + "w S E Z:E q:COMMIT S C:ROLLBACK Z:I ?", []string{"public"}},
		{"a COMMIT that fails (deferred constraint) undoes the SET",
			begin + inBlock(set("other")) + "q:COMMIT S E Z:I ?", []string{"public"}},
		{"an error in a multi-statement Query undoes its SET",
			"q:SET+search_path+TO+other w S C E Z:I ?", []string{"public"}},
		{"an error later in an extended-protocol batch undoes its SET",
			"q:SET+search_path+TO+other w w S C C:INSERT+0+1 E Z:I ?", []string{"public"}},
		{"an error after the SET's batch does not undo it",
			idle(set("other")) + "w S E Z:I ?", []string{"other"}},
		{"a failed SET changes nothing",
			"q:SET+search_path+TO+other S E Z:I ?", []string{"public"}},
		{"ROLLBACK inside a Query undoes the SET before it",
			"q:SET+search_path+TO+other q:ROLLBACK S C C:ROLLBACK Z:I ?", []string{"public"}},
		{"BEGIN later in a Query takes in the SET before it",
			"q:SET+search_path+TO+other q:BEGIN S C C:BEGIN Z:T " + rollback + "?", []string{"public"}},
		{"PREPARE TRANSACTION ends the transaction as a commit does",
			begin + "q:SET+LOCAL+search_path+TO+b S C Z:T " + inBlock(set("a")) + "q:PREPARE+TRANSACTION+'g' S C:PREPARE+TRANSACTION Z:I ?",
			[]string{"a"}},
		{"PREPARE TRANSACTION of an aborted transaction answers ROLLBACK",
			begin + inBlock(set("a")) + "w S E Z:E q:PREPARE+TRANSACTION+'g' S C:ROLLBACK Z:I ?", []string{"public"}},
		{"COMMIT AND CHAIN keeps the SET and opens a block whose ROLLBACK undoes only later SETs",
			begin + inBlock(set("a")) + "q:COMMIT+AND+CHAIN S C:COMMIT Z:T " + inBlock(set("b")) + "? " + rollback + "?",
			[]string{"b", "a"}},
		{"RESET restores the startup search_path",
			idle(set("other")) + "q:RESET+search_path S C:RESET Z:I ?", []string{"public"}},
		{"set_config with an expression: any path",
			"q:SELECT+set_config('search_path',+$1,+false) S C:SELECT+1 Z:I ?", []string{"*"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, playPaths(t, tc.script))
		})
	}
}

// Statements analysed before the server has answered the ones before
// them: every path the session may have when the statement runs, and no
// other.
func TestPathTracker_PipelinedStatementsResolveUnderEveryPossiblePath(t *testing.T) {
	tests := []struct {
		name, script string
		want         []string
	}{
		{"in the SET's batch, only a successful SET lets the statement run",
			"q:SET+search_path+TO+other ?", []string{"other"}},
		{"after the SET's Sync, the SET may have failed",
			"q:SET+search_path+TO+other S ?", []string{"other | public"}},
		{"the answer settles it",
			"q:SET+search_path+TO+other S ? C Z:I ?", []string{"other | public", "other"}},
		{"the error settles it",
			"q:SET+search_path+TO+other S ? E Z:I ?", []string{"other | public", "public"}},
		{"BEGIN; SET; ROLLBACK in one batch: the statement after runs only if the ROLLBACK did",
			"q:BEGIN q:SET+search_path+TO+other q:ROLLBACK ?", []string{"public"}},
		{"BEGIN; SET; ROLLBACK as separate Queries: if BEGIN failed, the SET stuck",
			"q:BEGIN S q:SET+search_path+TO+other S q:ROLLBACK S ? C:BEGIN Z:T ? C Z:T ? C:ROLLBACK Z:I ?",
			[]string{"public | other", "public", "public", "public"}},
		{"a COMMIT of a block that may have failed may answer ROLLBACK",
			"q:BEGIN S C:BEGIN Z:T q:SET+search_path+TO+other S w S q:COMMIT S ? C Z:T E Z:E C:ROLLBACK Z:I ?",
			[]string{"other | public", "public"}},
		{"an answer narrows the worlds while later batches are in flight",
			"q:SET+search_path+TO+other S w S ? C Z:I ?", []string{"other | public", "other"}},
		{"SAVEPOINT; SET; ROLLBACK TO pipelined in a block",
			"q:BEGIN S C:BEGIN Z:T q:SAVEPOINT+s q:SET+search_path+TO+other ? q:ROLLBACK+TO+s ?",
			[]string{"other", "public"}},
		{"in an aborted block nothing runs until ROLLBACK",
			"q:BEGIN S C:BEGIN Z:T q:SET+search_path+TO+other S C Z:T w S E Z:E ? q:ROLLBACK ?",
			[]string{"other", "public"}},
		{"SET LOCAL pipelined across its Sync",
			"q:SET+LOCAL+search_path+TO+other S ?", []string{"public"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, playPaths(t, tc.script))
		})
	}
}

func TestPathTracker_TooManyPossiblePathsResolveAgainstAnyUntilAnswered(t *testing.T) {
	var b strings.Builder
	for i := range maxWorlds + 8 {
		b.WriteString("q:SET+search_path+TO+s" + string(rune('a'+i%26)) + string(rune('a'+i/26)) + " S ")
	}
	b.WriteString("? ")
	for range maxWorlds + 8 {
		b.WriteString("C Z:I ")
	}
	b.WriteString("?")
	got := playPaths(t, b.String())
	assert.Equal(t, []string{"*", "snb"}, got)
}

// effectOf reads the statements that change search_path or the transaction.
func TestSession_EffectOf(t *testing.T) {
	s := &session{reset: []string{"app"}}
	tests := []struct {
		sql  string
		want effect
	}{
		{"INSERT INTO docs VALUES (1)", effect{}},
		{"SELECT 1", effect{}},
		{"BEGIN", effect{tx: extract.TxControl{Kind: extract.TxBegin}}},
		{"SET search_path TO a, b", effect{path: pathSet{set: true, path: []string{"a", "b"}}}},
		{"SET LOCAL search_path = a", effect{path: pathSet{set: true, local: true, path: []string{"a"}}}},
		{"RESET search_path", effect{path: pathSet{set: true, path: []string{"app"}}}},
		{"DISCARD ALL", effect{path: pathSet{set: true, path: []string{"app"}}}},
		{"SELECT set_config('search_path', $1, false)", effect{path: pathSet{set: true, path: anyPath}}},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, s.effectOf(tc.sql), tc.sql)
	}
}

func TestStartupSearchPath(t *testing.T) {
	tests := []struct {
		params map[string]string
		want   []string
	}{
		{nil, []string{"$user", "public"}},
		{map[string]string{"search_path": `app, "My Schema", Public`}, []string{"app", "My Schema", "public"}},
		{map[string]string{"options": "-c search_path=app"}, []string{"app"}},
		{map[string]string{"options": "-csearch_path=app,public -c statement_timeout=0"}, []string{"app", "public"}},
		{map[string]string{"options": `--search-path=app\ ,\ vecs`}, []string{"app", "vecs"}},
		{map[string]string{"options": "-c search_path=a", "search_path": "b"}, []string{"b"}},
		{map[string]string{"options": "-c statement_timeout=0"}, []string{"$user", "public"}},
		{map[string]string{"search_path": `"unterminated`}, anyPath},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, startupSearchPath(tc.params), "%v", tc.params)
	}
}

func TestPathsKey_IsUnambiguous(t *testing.T) {
	keys := map[string][][]string{}
	for _, paths := range [][][]string{
		{{"a", "b"}},
		{{"a,b"}},
		{{"a"}, {"b"}},
		{{"a;b"}},
		{{"1:a"}},
		{{""}, {"a"}},
		{{}, {"a"}},
		{anyPath},
	} {
		k := pathsKey(paths)
		require.NotContains(t, keys, k, "%q and %q share a key", keys[k], paths)
		keys[k] = paths
	}
}

func TestPathTracker_CandidatesDoNotAllocateWhenUnchanged(t *testing.T) {
	s := &session{reset: []string{"public"}}
	s.tx = newTxTracker(&recorder{}, s.reset)
	s.tx.candidates()
	allocs := testing.AllocsPerRun(100, func() {
		s.tx.Statement(effect{}, nil)
		s.tx.Sync()
		s.tx.candidates()
		s.tx.Complete("INSERT 0 1")
		s.tx.Ready('I')
	})
	assert.Zero(t, allocs)
}

// simServer plays PostgreSQL for TestPathTracker_CandidatesHoldTheServersPath:
// it runs the statements a client sent, in order, failing some at random,
// and answers as the server would.
type simServer struct {
	t      *testing.T
	rnd    *rand.Rand
	tx     *txTracker
	st     txState // the server's state; skipping: discarding until Sync
	queue  []simEvent
	probes int // probes that ran, and were checked
}

// simEvent is a client message: a statement (probe: a write resolved under
// cands when sent) or a Sync.
type simEvent struct {
	sync  bool
	eff   effect
	probe bool
	cands [][]string
}

func (s *simServer) answerNext() {
	ev := s.queue[0]
	s.queue = s.queue[1:]
	if ev.sync {
		if !s.st.skipping && !s.st.inBlock && !s.st.failed && s.rnd.IntN(20) == 0 {
			s.tx.Error() // the implicit commit fails (a deferred constraint)
			s.st.failed = true
		}
		s.st.skipping = false
		status := s.st.status()
		s.st.ready(status)
		s.tx.Ready(status)
		return
	}
	if s.st.skipping {
		return // discarded: no answer
	}
	e := ev.eff
	fail := func() {
		s.st.failed, s.st.skipping = true, true
		s.tx.Error()
	}
	if s.st.inBlock && s.st.failed {
		switch {
		case e.tx.Kind == extract.TxRollback, e.tx.Kind == extract.TxCommit:
			s.st.end(false, false)
			s.tx.Complete("ROLLBACK")
		case e.tx.Kind == extract.TxRollbackTo && s.st.find(e.tx.Savepoint) >= 0:
			s.st.ran(e, "ROLLBACK", marks{})
			s.tx.Complete("ROLLBACK")
		default:
			fail()
		}
		return
	}
	switch {
	case failsSurely(&s.st, e):
		fail()
	case s.rnd.IntN(8) == 0:
		if e.tx.Kind == extract.TxCommit {
			s.st.end(false, false) // a failed commit rolls back
			s.st.skipping = true
			s.tx.Error()
			return
		}
		fail()
	default:
		if ev.probe {
			s.probes++
			if !isAnyPath(ev.cands[0]) {
				assert.True(s.t, slices.ContainsFunc(ev.cands, func(p []string) bool { return samePath(p, s.st.current) }),
					"the write ran under %v, resolved under %v", s.st.current, ev.cands)
			}
		}
		s.st.ran(e, "COMMIT", marks{})
		s.tx.Complete("COMMIT")
	}
}

// Whatever the outcomes and however far the client runs ahead of the
// answers, a write is resolved under the path PostgreSQL runs it under;
// and exactly under it when nothing is in flight. The client sends
// transactions of random statements, with Syncs between them at random.
func TestPathTracker_CandidatesHoldTheServersPath(t *testing.T) {
	paths := [][]string{{"a"}, {"b"}, {"c", "public"}}
	tx := func(k extract.TxKind, sp string) effect { return effect{tx: extract.TxControl{Kind: k, Savepoint: sp}} }
	inside := []effect{ // statements of a transaction, besides writes
		tx(extract.TxBegin, ""), tx(extract.TxCommit, ""), tx(extract.TxRollback, ""),
		tx(extract.TxSavepoint, "s1"), tx(extract.TxSavepoint, "s2"),
		tx(extract.TxRelease, "s1"), tx(extract.TxRollbackTo, "s1"), tx(extract.TxRollbackTo, "s2"),
		{path: pathSet{set: true, path: paths[0]}},
		{path: pathSet{set: true, path: paths[1]}},
		{path: pathSet{set: true, path: paths[2]}},
		{path: pathSet{set: true, local: true, path: paths[1]}},
		{path: pathSet{set: true, local: true, path: paths[2]}},
	}
	ends := []effect{tx(extract.TxCommit, ""), tx(extract.TxRollback, ""), tx(extract.TxCommit, ""), {}}
	probes, exact := 0, 0
	for seed := range uint64(1000) {
		rnd := rand.New(rand.NewPCG(seed, 1))
		initial := []string{"public"}
		srv := &simServer{t: t, rnd: rnd, tx: newTxTracker(&recorder{}, initial), st: newTxState(initial)}
		lag := int(seed % 4) // how far the client runs ahead of the answers
		send := func(e effect, probe bool) {
			for len(srv.queue) > 0 && rnd.IntN(lag+1) == 0 {
				srv.answerNext()
			}
			if probe {
				_, cands := srv.tx.candidates()
				if len(srv.queue) == 0 && srv.st.live() {
					exact++
					require.Equal(t, [][]string{srv.st.current}, cands, "seed %d: nothing in flight", seed)
				}
				srv.tx.Statement(effect{}, nil)
				srv.queue = append(srv.queue, simEvent{probe: true, cands: cands})
			} else {
				srv.tx.Statement(e, nil)
				srv.queue = append(srv.queue, simEvent{eff: e})
			}
			if rnd.IntN(2) == 0 {
				srv.tx.Sync()
				srv.queue = append(srv.queue, simEvent{sync: true})
			}
		}
		for range 40 {
			if rnd.IntN(3) > 0 {
				send(tx(extract.TxBegin, ""), false)
			}
			for range rnd.IntN(6) {
				if rnd.IntN(3) == 0 {
					send(effect{}, true)
				} else {
					send(inside[rnd.IntN(len(inside))], false)
				}
			}
			if e := ends[rnd.IntN(len(ends))]; !e.none() {
				send(e, false)
			}
			send(effect{}, true)
			if rnd.IntN(2) == 0 { // the client waits for the answers
				srv.tx.Sync()
				srv.queue = append(srv.queue, simEvent{sync: true})
				for len(srv.queue) > 0 {
					srv.answerNext()
				}
			}
		}
		srv.tx.Sync()
		srv.queue = append(srv.queue, simEvent{sync: true})
		for len(srv.queue) > 0 {
			srv.answerNext()
		}
		probes += srv.probes
		if t.Failed() {
			t.Fatalf("seed %d", seed)
		}
	}
	t.Logf("%d writes checked, %d with nothing in flight", probes, exact)
}
