package pgcapture

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/lethe-privacy/lethe/extract"
	"github.com/lethe-privacy/lethe/ledger"
)

// recorder collects decisions as "+1" (confirmed) and "-1" (dropped).
type recorder struct{ got []string }

func (r *recorder) Confirm(ids []ledger.IntentID) {
	for _, id := range ids {
		r.got = append(r.got, fmt.Sprintf("+%d", id))
	}
}

func (r *recorder) Deleted(_ ledger.Store, tags []extract.Tag) {
	for _, t := range tags {
		r.got = append(r.got, "x"+t.ID)
	}
}

func (r *recorder) Drop(ids []ledger.IntentID) {
	for _, id := range ids {
		r.got = append(r.got, fmt.Sprintf("-%d", id))
	}
}

// play drives a tracker with a compact script of events, in wire order:
//
//	w1        a write statement with intent 1 (client)
//	d7        a delete of record "7" by id (client)
//	s:SQL     a statement with that text and no intent (client), e.g. s:BEGIN
//	o         an opaque simple Query (client)
//	S         Sync / end of a simple Query (client)
//	C:TAG     CommandComplete with TAG (server), e.g. C:INSERT_0_1, C:ROLLBACK
//	E         ErrorResponse (server)
//	Z:I       ReadyForQuery with status I, T or E (server)
//	X         the session ends
func play(script string) []string {
	r := &recorder{}
	t := newTxTracker(r, nil)
	for _, ev := range strings.Fields(script) {
		switch {
		case ev[0] == 'd':
			t.Statement(effect{}, []extract.Tag{{Op: extract.OpDelete, ID: ev[1:]}})
		case ev[0] == 'w':
			var id int
			fmt.Sscanf(ev[1:], "%d", &id)
			t.Statement(effect{}, nil, ledger.IntentID(id))
		case strings.HasPrefix(ev, "s:"):
			t.Statement(effect{tx: extract.ClassifyTx(strings.ReplaceAll(ev[2:], "_", " "))}, nil)
		case ev == "o":
			t.Opaque()
		case ev == "S":
			t.Sync()
		case strings.HasPrefix(ev, "C:"):
			t.Complete(strings.ReplaceAll(ev[2:], "_", " "))
		case ev == "E":
			t.Error()
		case strings.HasPrefix(ev, "Z:"):
			t.Ready(ev[2])
		case ev == "X":
			t.Abandon()
		default:
			panic("bad event " + ev)
		}
	}
	return r.got
}

func TestTxTracker_DecidesEachWriteAsPostgreSQLDoes(t *testing.T) {
	tests := []struct {
		name, script string
		want         []string
	}{
		{"implicit transaction commits at Sync",
			"w1 S C:INSERT_0_1 Z:I", []string{"+1"}},
		{"pipelined batch commits together at its Sync",
			"w1 w2 w3 S C:INSERT_0_1 C:INSERT_0_1 C:INSERT_0_1 Z:I", []string{"+1", "+2", "+3"}},
		{"error mid-pipeline rolls back the whole implicit transaction",
			"w1 w2 w3 S C:INSERT_0_1 E Z:I", []string{"-2", "-3", "-1"}},
		{"a statement queued after the server's error (pipelined behind it) is dropped at Ready",
			"w1 w2 C:INSERT_0_1 E w3 S Z:I", []string{"-2", "-3", "-1"}},
		{"batches pipelined across Syncs are decided separately",
			"w1 S w2 S C:INSERT_0_1 Z:I E Z:I", []string{"+1", "-2"}},
		{"explicit COMMIT confirms",
			"s:BEGIN S C:BEGIN Z:T w1 S C:INSERT_0_1 Z:T s:COMMIT S C:COMMIT Z:I", []string{"+1"}},
		{"explicit ROLLBACK drops",
			"s:BEGIN S C:BEGIN Z:T w1 S C:INSERT_0_1 Z:T s:ROLLBACK S C:ROLLBACK Z:I", []string{"-1"}},
		{"COMMIT of an aborted transaction answers ROLLBACK and drops",
			"s:BEGIN S C:BEGIN Z:T w1 S C:INSERT_0_1 Z:T w2 S E Z:E s:COMMIT S C:ROLLBACK Z:I", []string{"-2", "-1"}},
		{"savepoint rollback drops only the writes after it",
			"s:BEGIN w1 s:SAVEPOINT_a w2 s:ROLLBACK_TO_SAVEPOINT_a w3 s:COMMIT S C:BEGIN C:INSERT_0_1 C:SAVEPOINT C:INSERT_0_1 C:ROLLBACK C:INSERT_0_1 C:COMMIT Z:I",
			[]string{"-2", "+1", "+3"}},
		{"error then rollback to savepoint recovers the block",
			"s:BEGIN S C:BEGIN Z:T w1 s:SAVEPOINT_sp S C:INSERT_0_1 C:SAVEPOINT Z:T w2 S E Z:E s:ROLLBACK_TO_sp S C:ROLLBACK Z:T s:COMMIT S C:COMMIT Z:I",
			[]string{"-2", "+1"}},
		{"released savepoint keeps its writes",
			"s:BEGIN w1 s:SAVEPOINT_a w2 s:RELEASE_a s:COMMIT S C:BEGIN C:INSERT_0_1 C:SAVEPOINT C:INSERT_0_1 C:RELEASE C:COMMIT Z:I",
			[]string{"+1", "+2"}},
		{"simple multi-statement query is one implicit transaction",
			"w1 w2 S C:INSERT_0_1 E Z:I", []string{"-2", "-1"}},
		{"BEGIN inside a query string takes in the statements before it",
			"w1 s:BEGIN w2 s:COMMIT w3 S C:INSERT_0_1 C:BEGIN C:INSERT_0_1 C:COMMIT C:INSERT_0_1 Z:I",
			[]string{"+1", "+2", "+3"}},
		{"opaque queries absorb their completions",
			"o S C:SELECT_1 C:UPDATE_3 Z:I w1 S C:INSERT_0_1 Z:I", []string{"+1"}},
		{"a lost session leaves the open transaction pending",
			"s:BEGIN S C:BEGIN Z:T w1 S C:INSERT_0_1 Z:T s:COMMIT S X", nil},
		{"a lost session before the Sync's answer leaves the write pending",
			"w1 S C:INSERT_0_1 X", nil},
		{"PREPARE TRANSACTION leaves the writes pending",
			"s:BEGIN S C:BEGIN Z:T w1 S C:INSERT_0_1 Z:T s:PREPARE_TRANSACTION_'g' S C:PREPARE_TRANSACTION Z:I", nil},
		{"PREPARE TRANSACTION of a failed block answers ROLLBACK and drops the writes",
			"s:BEGIN S C:BEGIN Z:T w1 S C:INSERT_0_1 Z:T w2 S E Z:E s:PREPARE_TRANSACTION_'g' S C:ROLLBACK Z:I", []string{"-2", "-1"}},
		{"COMMIT AND CHAIN confirms and opens the next block",
			"s:BEGIN S C:BEGIN Z:T w1 S C:INSERT_0_1 Z:T s:COMMIT_AND_CHAIN w2 S C:COMMIT C:INSERT_0_1 Z:T s:ROLLBACK S C:ROLLBACK Z:I",
			[]string{"+1", "-2"}},
		{"a failed statement in a block drops only itself until the block ends",
			"s:BEGIN S C:BEGIN Z:T w1 S C:INSERT_0_1 Z:T w2 S E Z:E", []string{"-2"}},
		{"a committed delete is applied after the writes are confirmed",
			"w1 d7 S C:INSERT_0_1 C:DELETE_1 Z:I", []string{"+1", "x7"}},
		{"a rolled back delete is not applied",
			"s:BEGIN d7 s:ROLLBACK S C:BEGIN C:DELETE_1 C:ROLLBACK Z:I", nil},
		{"a delete undone by a savepoint rollback is not applied",
			"s:BEGIN d7 s:SAVEPOINT_a d8 s:ROLLBACK_TO_a s:COMMIT S C:BEGIN C:DELETE_1 C:SAVEPOINT C:DELETE_1 C:ROLLBACK C:COMMIT Z:I",
			[]string{"x7"}},
		{"parse error before the write skips it",
			"w1 S E Z:I", []string{"-1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, play(tc.script))
		})
	}
}
