package ledger

import (
	"time"

	"github.com/jackc/pgx/v5"
)

// A run of consecutive confirmations in one batch is one statement, as
// in SQLite (confirmedRun): a record that several of them name is written
// once, as the last of them (by its place in the run) leaves it, and each
// confirmation learns its intent's state as the lock returned it. An
// intent named twice takes the place of its first confirmation, the one
// that writes: a second finds it confirmed and writes nothing.
const pgConfirmRun = `
WITH a AS (
	SELECT id, min(pos) AS pos FROM unnest($1::bigint[]) WITH ORDINALITY AS a (id, pos) GROUP BY id
), o AS (
	SELECT id, state, e_store, e_tbl, e_record_id, e_subject, e_unattributed
	FROM ledger.intents WHERE id IN (SELECT id FROM a) ORDER BY id FOR UPDATE
), i AS (
	UPDATE ledger.intents n SET state = 'confirmed',
		e_store = NULL, e_tbl = NULL, e_record_id = NULL, e_subject = NULL, e_unattributed = NULL
	FROM o WHERE n.id = o.id AND o.state = 'pending'
	RETURNING o.*
), moved AS (
	SELECT u.store, u.tbl, u.record_id, u.subject, u.unattributed, i.id AS intent_id, a.pos
	FROM (i JOIN a ON a.id = i.id),
		unnest(i.e_store, i.e_tbl, i.e_record_id, i.e_subject, i.e_unattributed)
		AS u (store, tbl, record_id, subject, unattributed)
), up AS (
	-- COLLATE "C": the order only groups equal records, so it need not
	-- follow the database's collation, which costs far more to compare.
	INSERT INTO ledger.entries (store, tbl, record_id, subject, unattributed, state, intent_id, updated_at)
	SELECT DISTINCT ON (store COLLATE "C", tbl COLLATE "C", record_id COLLATE "C", subject, unattributed)
		store, tbl, record_id, subject, unattributed, 'confirmed', intent_id, $2
	FROM moved
	ORDER BY store COLLATE "C", tbl COLLATE "C", record_id COLLATE "C", subject, unattributed, pos DESC
	ON CONFLICT (store, tbl, record_id, subject, unattributed) DO UPDATE SET
		state = 'confirmed', intent_id = excluded.intent_id, updated_at = excluded.updated_at
)
SELECT id, state FROM o`

// pgSteps splits batch into its statements: a run of two or more
// consecutive confirmations is one, any other request one of its own.
func pgSteps(batch []*request) [][]*request {
	var steps [][]*request
	for i := 0; i < len(batch); {
		j := i + 1
		if batch[i].kind == opConfirm {
			for j < len(batch) && batch[j].kind == opConfirm {
				j++
			}
		}
		steps = append(steps, batch[i:j])
		i = j
	}
	return steps
}

func (l *Postgres) queueConfirmRun(b *pgx.Batch, now time.Time, run []*request) {
	ids := make([]int64, len(run))
	for i, r := range run {
		ids[i] = int64(r.intent)
	}
	b.Queue(l.q(pgConfirmRun), ids, now)
}

// readConfirmRun gives each confirmation of run the state its intent had
// before the run: an intent the ledger does not hold is unknown.
func readConfirmRun(res pgx.BatchResults, run []*request) error {
	rows, err := res.Query()
	if err != nil {
		return err
	}
	prior := map[IntentID]string{}
	for rows.Next() {
		var id int64
		var state string
		if err := rows.Scan(&id, &state); err != nil {
			rows.Close()
			return err
		}
		prior[IntentID(id)] = state
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, r := range run {
		if p := prior[r.intent]; p != intentPending {
			r.opErr = resolveErr(r.kind, p)
		}
	}
	return nil
}
