package pgstore

import (
	"fmt"
	"strconv"
)

// Plan is what forget does in one table, in the words and statements a
// certificate uses, built from the rule alone (no connection): for a data
// map that a privacy officer reads and CI keeps current.
type Plan struct {
	// Method says in words what is deleted and how.
	Method string
	// Deletes are the statements that delete, each repeated until a batch
	// comes back short ($1 as in VerifyQueries).
	Deletes []string
	// VerifyMethod and VerifyQueries are how absence is verified, as the
	// certificate states them.
	VerifyMethod  string
	VerifyQueries []string
	// Cleanup is the statement run after the delete ("" without vacuum).
	Cleanup string
}

// PlanCasts says how the statements of a Plan can differ from a
// certificate's: forget reads the column types from the catalog when it
// runs, a Plan knows only what the rule implies.
const PlanCasts = "The statements are shown with the column types the rule implies: a JSON path on a jsonb column, " +
	"other columns compared as text. Forget reads the types from the catalog when it runs and compares text columns " +
	"without a cast, uuid and integer ids in their own type and json columns through jsonb, so that indexes serve it; " +
	"each certificate states the queries it ran."

// deleteMethod says what Delete does with a Match.
var deleteMethod = "in one transaction, delete the rows whose subject column equals the subject or whose JSON path holds it " +
	"(as a value or inside a JSON array), then the rows whose id the ledger holds for the subject and whose subject is now " +
	"NULL, " + strconv.Itoa(deleteBatch) + " rows per statement; the ids deleted are journaled before the commit. " +
	"A row the ledger lists that now names another person is kept"

// PlanFor is t's plan; vacuum says whether the rule asks for VACUUM after
// each forget.
func PlanFor(t Table, vacuum bool) (Plan, error) {
	m, err := NewMatch(t, ruleTypes(t))
	if err != nil {
		return Plan{}, fmt.Errorf("pgvector: rule for %s: %w", t, err)
	}
	p := Plan{
		Method:        deleteMethod,
		Deletes:       []string{m.deleteQuery(m.BySubject, deleteBatch), m.deleteQuery(m.ByID, deleteBatch)},
		VerifyMethod:  verifyMethod,
		VerifyQueries: m.CountQueries(),
	}
	if vacuum {
		p.Cleanup = t.VacuumStatement()
	}
	return p, nil
}

// ruleTypes are the column types t's rule implies: jsonb for a column a
// subject reads a JSON path of, no known type (compared as text) for the
// others.
func ruleTypes(t Table) map[string]string {
	types := map[string]string{t.ID: ""}
	for _, s := range t.Subjects {
		if len(s.Path) > 0 {
			types[s.Column] = "jsonb"
		} else if _, ok := types[s.Column]; !ok {
			types[s.Column] = ""
		}
	}
	return types
}
