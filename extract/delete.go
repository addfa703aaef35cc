package extract

import (
	pg "github.com/pganalyze/pg_query_go/v6"
)

// analyzeDelete handles DELETE FROM t WHERE …. Deletes never add personal
// data, so only a delete by id is worth a tag (it lets the ledger drop the
// record); any other DELETE yields none.
func analyzeDelete(t *table, s *pg.DeleteStmt) *Analysis {
	a := &Analysis{Table: t.name, Kind: KindDelete, rule: t}
	a.ids, a.byIDs = whereIDs(s.WhereClause, t, aliasOf(s.Relation))
	return a
}

// deleteTags makes one OpDelete tag per id.
func (a *Analysis) deleteTags(p Params) ([]Tag, error) {
	if !a.byIDs {
		return nil, nil
	}
	ids, err := resolveIDs(a.ids, p)
	if err != nil {
		return nil, err
	}
	tags := make([]Tag, 0, len(ids))
	for _, id := range ids {
		tags = append(tags, Tag{Table: a.Table, Op: OpDelete, ID: id})
	}
	return tags, nil
}
