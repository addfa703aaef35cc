package ledger

import (
	"context"
	"fmt"
	"sort"
	"time"
)

// Pending returns intents not yet confirmed or dropped, oldest first.
func (l *SQLite) Pending(ctx context.Context) ([]Intent, error) {
	return l.pendingIntents(ctx, "pending_all")
}

// PendingOrphans returns the pending intents of every other handle, oldest
// first: a SQLite ledger serves one proxy, so they were left by its earlier
// runs (see owners.go).
func (l *SQLite) PendingOrphans(ctx context.Context) ([]Intent, error) {
	if l.decisions.isClosed() {
		return nil, ErrClosed
	}
	return l.pendingIntents(ctx, "pending_orphans", l.owner)
}

func (l *SQLite) pendingIntents(ctx context.Context, stmt string, args ...any) ([]Intent, error) {
	ps, err := l.readPending(ctx, stmt, args...)
	if err != nil {
		return nil, unavailable(err)
	}
	resolved, err := l.resolvedAmong(ctx, ps)
	if err != nil {
		return nil, unavailable(err)
	}
	var out []Intent
	for _, p := range ps {
		if resolved[p.id] {
			continue
		}
		entries, err := decodeEntries(p.blob)
		if err != nil {
			return nil, unavailable(fmt.Errorf("intent %d: %w", p.id, err))
		}
		out = append(out, Intent{ID: p.id, CreatedAt: time.UnixMicro(p.created).UTC(), Entries: entries})
	}
	return out, nil
}

// resolvedAmong returns which of the pending intents ps are resolved in
// the ledger file.
func (l *SQLite) resolvedAmong(ctx context.Context, ps []pendingIntent) (map[IntentID]bool, error) {
	resolved := map[IntentID]bool{}
	if len(ps) == 0 {
		return resolved, nil
	}
	rows, err := l.stmts["resolved_among"].QueryContext(ctx, idsJSON(idsOf(ps)))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		resolved[IntentID(id)] = true
	}
	return resolved, rows.Err()
}

// BySubject returns every record about subject, in every state, ordered by
// store, table, record id and intent.
func (l *SQLite) BySubject(ctx context.Context, subject SubjectHash) ([]Record, error) {
	if err := l.syncObserved(ctx); err != nil {
		return nil, err
	}
	ps, err := l.readPending(ctx, "pending_all")
	if err != nil {
		return nil, unavailable(err)
	}
	var (
		pending []Record
		about   []pendingIntent // the pending intents that name subject
	)
	for _, p := range ps {
		entries, err := decodeEntries(p.blob)
		if err != nil {
			return nil, unavailable(fmt.Errorf("intent %d: %w", p.id, err))
		}
		named := false
		for _, e := range entries {
			if e.Subject == subject {
				pending = append(pending, Record{Entry: e, State: StatePending, Intent: p.id, UpdatedAt: time.UnixMicro(p.created).UTC()})
				named = true
			}
		}
		if named {
			about = append(about, p)
		}
	}
	rows, err := l.stmts["by_subject"].QueryContext(ctx, subject[:], idsJSON(idsOf(about)))
	if err != nil {
		return nil, unavailable(err)
	}
	defer rows.Close()
	var out []Record
	resolved := map[IntentID]bool{}
	for rows.Next() {
		var (
			rec     Record
			store   string
			state   string
			intent  int64
			updated int64
		)
		if err := rows.Scan(&store, &rec.Table, &rec.RecordID, &rec.Unattributed, &state, &intent, &updated); err != nil {
			return nil, unavailable(err)
		}
		if state == "" {
			resolved[IntentID(intent)] = true
			continue
		}
		rec.Store, rec.Subject, rec.State, rec.Intent = Store(store), subject, State(state), IntentID(intent)
		rec.UpdatedAt = time.UnixMicro(updated).UTC()
		out = append(out, rec)
	}
	if err := rows.Err(); err != nil {
		return nil, unavailable(err)
	}
	for _, rec := range pending {
		if !resolved[rec.Intent] {
			out = append(out, rec)
		}
	}
	sortRecords(out)
	return out, nil
}

// Counts returns record counts per store, table and state.
func (l *SQLite) Counts(ctx context.Context) ([]TableCount, error) {
	if err := l.syncObserved(ctx); err != nil {
		return nil, err
	}
	ps, err := l.readPending(ctx, "pending_all")
	if err != nil {
		return nil, unavailable(err)
	}
	rows, err := l.stmts["counts"].QueryContext(ctx, idsJSON(idsOf(ps)))
	if err != nil {
		return nil, unavailable(err)
	}
	defer rows.Close()
	var out []TableCount
	resolved := map[IntentID]bool{}
	for rows.Next() {
		var c TableCount
		var store, state string
		if err := rows.Scan(&store, &c.Table, &state, &c.Count); err != nil {
			return nil, unavailable(err)
		}
		if state == "" {
			resolved[IntentID(c.Count)] = true
			continue
		}
		c.Store, c.State = Store(store), State(state)
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, unavailable(err)
	}
	pending := map[[2]string]int64{}
	for _, p := range ps {
		if resolved[p.id] {
			continue
		}
		entries, err := decodeEntries(p.blob)
		if err != nil {
			return nil, unavailable(err)
		}
		for _, e := range entries {
			pending[[2]string{string(e.Store), e.Table}]++
		}
	}
	for k, n := range pending {
		out = append(out, TableCount{Store: Store(k[0]), Table: k[1], State: StatePending, Count: n})
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Store != b.Store {
			return a.Store < b.Store
		}
		if a.Table != b.Table {
			return a.Table < b.Table
		}
		return a.State < b.State
	})
	return out, nil
}

// sortRecords orders records by store, table, record id and intent, the
// order both backends return them in.
func sortRecords(recs []Record) {
	sort.SliceStable(recs, func(i, j int) bool {
		a, b := recs[i], recs[j]
		if a.Store != b.Store {
			return a.Store < b.Store
		}
		if a.Table != b.Table {
			return a.Table < b.Table
		}
		if a.RecordID != b.RecordID {
			return a.RecordID < b.RecordID
		}
		return a.Intent < b.Intent
	})
}
