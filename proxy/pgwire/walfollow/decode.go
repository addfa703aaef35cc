package walfollow

import (
	"fmt"
	"log/slog"

	"github.com/lethe-privacy/lethe/capture"
	"github.com/lethe-privacy/lethe/extract"
	"github.com/lethe-privacy/lethe/ledger"
)

// relation is a published relation as the decoder reads its rows: the
// configured table it belongs to (itself, or the configured ancestor of an
// inheritance child) and where that table's columns are in its tuples.
type relation struct {
	table    extract.Stored
	id       int   // column index of the id, -1 when not published
	subjects []int // per table.Columns(), column index or -1
	// child is set for an inheritance child: its TRUNCATE empties only
	// itself, whose records the ledger cannot tell from its parent's.
	child bool
}

// Resolver names the configured table a published relation belongs to:
// ok is false when none does.
type Resolver func(relationID uint32, schema, name string) (table string, ok bool, err error)

// decoder turns pgoutput messages into ledger changes. It is not safe for
// concurrent use.
type decoder struct {
	rules   *extract.Rules
	core    Core // hashes subjects, says which were forgotten
	resolve Resolver
	rels    map[uint32]*relation

	// Scratch reused across rows.
	vals     []string
	present  []bool
	subjects []string

	stats *Stats // NoID, BadSubject and LateWrites are counted here

	// late queues the rows about forgotten subjects (Core.Forgotten),
	// with the subject as stored, for Core.LateWrite.
	late []lateWrite

	// recent compares rows with the proxy's intents (nil: no check).
	recent Recent
	log    *slog.Logger
}

// Recent is the proxy's memory of its own recent intents (capture.Recent).
type Recent interface {
	Check(table, id string, stored []ledger.SubjectHash) capture.Verdict
}

// lateWrite is a committed row about a forgotten subject. It holds the
// subject as stored, in memory only, until the backstop has run.
type lateWrite struct {
	table, subject string
}

func newDecoder(rules *extract.Rules, core Core, resolve Resolver, stats *Stats) *decoder {
	return &decoder{rules: rules, core: core, resolve: resolve, rels: map[uint32]*relation{}, stats: stats}
}

// relation records a Relation message: the server sends one before the
// first row of each relation in a session, and again after its schema
// changes.
func (d *decoder) relation(m *message) error {
	name, ok, err := d.resolve(m.relation, m.schema, m.name)
	if err != nil {
		return err
	}
	if !ok {
		delete(d.rels, m.relation)
		return nil
	}
	t, ok := d.rules.Stored(name)
	if !ok {
		return fmt.Errorf("walfollow: relation %s.%s resolved to %s, which has no rule", m.schema, m.name, name)
	}
	r := &relation{table: t, id: -1, child: t.Schema() != m.schema || t.Relation() != m.name}
	cols := t.Columns()
	r.subjects = make([]int, len(cols))
	for i := range r.subjects {
		r.subjects[i] = -1
	}
	for i, c := range m.columns {
		if c == t.ID() {
			r.id = i
		}
		for j, s := range cols {
			if c == s {
				r.subjects[j] = i
			}
		}
	}
	d.rels[m.relation] = r
	return nil
}

// column returns the text of column i of tuple; ok is false for NULL, an
// unchanged TOASTed value, or a column not published.
func value(tuple []column, i int) (string, bool) {
	if i < 0 || i >= len(tuple) || tuple[i].kind != 't' {
		return "", false
	}
	return string(tuple[i].data), true
}

// write appends the change a new tuple makes: the record with its
// stored subjects. A row whose id is not published or NULL cannot be
// named and is counted instead.
func (d *decoder) write(r *relation, tuple []column, dst []ledger.Change) ([]ledger.Change, error) {
	id, ok := value(tuple, r.id)
	if !ok {
		d.stats.NoID.Add(1)
		return dst, nil
	}
	n := len(r.subjects)
	d.vals, d.present = d.vals[:0], d.present[:0]
	for j := 0; j < n; j++ {
		v, ok := value(tuple, r.subjects[j])
		d.vals, d.present = append(d.vals, v), append(d.present, ok)
	}
	var err error
	d.subjects, err = r.table.Subjects(d.subjects[:0], d.vals, d.present)
	if err != nil {
		// The server stored it, so the JSON is valid JSON to PostgreSQL;
		// a subject the rule cannot read is counted, never guessed.
		d.stats.BadSubject.Add(1)
		return dst, nil
	}
	c := ledger.Change{Kind: ledger.ChangeWrite, Store: ledger.StorePostgres, Table: r.table.Name(), RecordID: id,
		Subjects: make([]ledger.SubjectHash, 0, len(d.subjects))}
	for _, s := range d.subjects {
		h := d.core.HashSubject(s)
		c.Subjects = append(c.Subjects, h)
		if d.core.Forgotten(h) {
			d.stats.LateWrites.Add(1)
			d.late = append(d.late, lateWrite{table: c.Table, subject: s})
		}
	}
	d.compare(c)
	if len(c.Subjects) == 0 {
		return dst, nil // about nobody: nothing to record
	}
	return append(dst, c), nil
}

// change appends the ledger changes of one message (Insert, Update,
// Delete, Truncate; a Relation updates the decoder); others append
// nothing.
func (d *decoder) change(m *message, dst []ledger.Change) ([]ledger.Change, error) {
	switch m.kind {
	case 'R':
		return dst, d.relation(m)
	case 'I':
		if r := d.rels[m.relation]; r != nil {
			return d.write(r, m.new, dst)
		}
	case 'U':
		r := d.rels[m.relation]
		if r == nil {
			return dst, nil
		}
		if old, ok := value(m.old, r.id); m.hasOld && ok {
			if id, ok := value(m.new, r.id); !ok || id != old {
				dst = append(dst, ledger.Change{Kind: ledger.ChangeDelete, Store: ledger.StorePostgres, Table: r.table.Name(), RecordID: old})
			}
		}
		return d.write(r, m.new, dst)
	case 'D':
		r := d.rels[m.relation]
		if r == nil {
			return dst, nil
		}
		if id, ok := value(m.old, r.id); ok {
			return append(dst, ledger.Change{Kind: ledger.ChangeDelete, Store: ledger.StorePostgres, Table: r.table.Name(), RecordID: id}), nil
		}
		d.stats.NoID.Add(1)
	case 'T':
		for _, id := range m.truncated {
			if r := d.rels[id]; r != nil && !r.child {
				dst = append(dst, ledger.Change{Kind: ledger.ChangeTruncate, Store: ledger.StorePostgres, Table: r.table.Name()})
			}
		}
	}
	return dst, nil
}

// compare checks a stored row against the proxy's intent for it and
// counts the verdict. A disagreement is logged (the table, never values)
// the first time per table and then at every power of ten.
func (d *decoder) compare(c ledger.Change) {
	if d.recent == nil {
		return
	}
	switch d.recent.Check(c.Table, c.RecordID, c.Subjects) {
	case capture.Agree:
		d.stats.Agreed.Add(1)
	case capture.NotSeen:
		d.stats.NotSeen.Add(1)
		d.stats.countTable(c.Table, TableCheck{NotSeen: 1})
	case capture.Disagree:
		d.stats.Disagreed.Add(1)
		if n := d.stats.countTable(c.Table, TableCheck{Disagreed: 1}).Disagreed; isPowerOfTen(n) {
			d.log.Warn("wal: the proxy tagged a row with other subjects than the server stored (the ledger keeps both; forget checks rows before deleting)",
				"table", c.Table, "rows_so_far", n)
		}
	}
}

func isPowerOfTen(n int64) bool {
	for n >= 10 && n%10 == 0 {
		n /= 10
	}
	return n == 1
}
