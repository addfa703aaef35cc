package capture

import (
	"bytes"
	"crypto/sha256"
	"slices"
	"sync"

	"github.com/lethe-privacy/lethe/ledger"
)

// Verdict is how a committed row compares with the proxy's intent for it.
type Verdict uint8

const (
	// Agree: the proxy tagged the record with the subjects it stores.
	Agree Verdict = iota + 1
	// Disagree: the proxy tagged the record, with other subjects (its
	// reading of the statement differs from what the server stored).
	Disagree
	// NotSeen: no recent intent of this proxy names the record (written
	// around it, through another proxy, or longer ago than Recent keeps).
	NotSeen
)

// Recent remembers the subjects of PostgreSQL records this proxy recently
// made intents for, so that the WAL follower can compare them with the
// values stored: a live check of the proxy's parser. It keeps at most
// about twice its limit of records (two generations: the older is dropped
// when the newer fills up); each record is checked once. Safe for
// concurrent use.
type Recent struct {
	mu        sync.Mutex
	limit     int
	cur, prev map[recentKey]recentValue
}

// recentKey is a record. Records whose ids the store generates cannot be
// told apart in an intent's entries, so each of their entries is counted
// under its one subject instead (id "", subject set).
type recentKey struct {
	table, id string
	subject   ledger.SubjectHash
}

// recentValue is what the intents of a record wrote, oldest first: the
// set of subjects (subjectSet) of each of its last maxWrites writes (an
// insert and an update of one record in quick succession are two), or for
// generated ids how many entries named the subject.
type recentValue struct {
	sets  [maxWrites]ledger.SubjectHash
	n     int
	count int
}

// maxWrites is how many writes of one record are remembered; older ones
// are forgotten (their rows then count as agreeing with nothing).
const maxWrites = 4

// push remembers one more write of a record.
func (v recentValue) push(set ledger.SubjectHash) recentValue {
	if v.n == maxWrites {
		copy(v.sets[:], v.sets[1:])
		v.n--
	}
	v.sets[v.n] = set
	v.n++
	return v
}

// NewRecent keeps about limit records per generation (default 100000).
func NewRecent(limit int) *Recent {
	if limit <= 0 {
		limit = 100_000
	}
	return &Recent{limit: limit, cur: map[recentKey]recentValue{}, prev: map[recentKey]recentValue{}}
}

// subjectSet names a set of subjects, whatever their order and repeats:
// the subject itself when there is one, else a hash of them sorted.
func subjectSet(subjects []ledger.SubjectHash) ledger.SubjectHash {
	if len(subjects) == 1 {
		return subjects[0]
	}
	s := slices.Clone(subjects)
	slices.SortFunc(s, func(a, b ledger.SubjectHash) int { return bytes.Compare(a[:], b[:]) })
	s = slices.Compact(s)
	if len(s) == 1 {
		return s[0]
	}
	h := sha256.New()
	for _, x := range s {
		h.Write(x[:])
	}
	var out ledger.SubjectHash
	h.Sum(out[:0])
	return out
}

// add remembers the records of an intent's entries, in which the entries
// of one record are consecutive (Capture.entries makes them so).
func (r *Recent) add(entries []ledger.Entry) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := 0; i < len(entries); {
		e := entries[i]
		j := i + 1
		for j < len(entries) && entries[j].Table == e.Table && entries[j].RecordID == e.RecordID && entries[j].Store == e.Store {
			j++
		}
		run := entries[i:j]
		i = j
		switch {
		case e.Store != ledger.StorePostgres || e.Unattributed:
		case e.RecordID != "":
			set := e.Subject
			if len(run) > 1 {
				subjects := make([]ledger.SubjectHash, len(run))
				for k, x := range run {
					subjects[k] = x.Subject
				}
				set = subjectSet(subjects)
			}
			k := recentKey{table: e.Table, id: e.RecordID}
			r.put(k, r.cur[k].push(set))
		default:
			for _, x := range run { // one count per entry
				k := recentKey{table: e.Table, subject: x.Subject}
				v := r.cur[k]
				v.count++
				r.put(k, v)
			}
		}
	}
}

func (r *Recent) put(k recentKey, v recentValue) {
	if _, ok := r.cur[k]; !ok && len(r.cur) >= r.limit {
		r.prev, r.cur = r.cur, make(map[recentKey]recentValue, r.limit)
	}
	r.cur[k] = v
}

// Check compares a committed row of table with the proxy's intents for
// it and forgets the intents it answers (a row is checked once). Rows of
// one record commit in the order of its writes: the row agrees when one of
// the record's remembered writes has its subjects, and that write and the
// older ones are forgotten (an older one whose row never came rolled
// back); otherwise the oldest write disagrees with it.
func (r *Recent) Check(table, id string, stored []ledger.SubjectHash) Verdict {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := recentKey{table: table, id: id}
	for _, gen := range []map[recentKey]recentValue{r.cur, r.prev} {
		v, ok := gen[k]
		if !ok || v.n == 0 {
			continue
		}
		verdict, used := Disagree, 1
		if len(stored) > 0 {
			set := subjectSet(stored)
			for i := 0; i < v.n; i++ {
				if v.sets[i] == set {
					verdict, used = Agree, i+1
					break
				}
			}
		}
		copy(v.sets[:], v.sets[used:v.n])
		if v.n -= used; v.n == 0 {
			delete(gen, k)
		} else {
			gen[k] = v
		}
		return verdict
	}
	if len(stored) == 0 || !r.takeGenerated(table, stored, true) {
		return NotSeen
	}
	r.takeGenerated(table, stored, false)
	return Agree
}

// takeGenerated reports whether every subject of stored has a count
// among the generated-id records of table, and takes one of each unless
// dryRun.
func (r *Recent) takeGenerated(table string, stored []ledger.SubjectHash, dryRun bool) bool {
	for _, s := range stored {
		k := recentKey{table: table, subject: s}
		gen := r.cur
		if gen[k].count == 0 {
			gen = r.prev
		}
		v := gen[k]
		if v.count == 0 {
			return false
		}
		if dryRun {
			continue
		}
		if v.count == 1 {
			delete(gen, k)
		} else {
			v.count--
			gen[k] = v
		}
	}
	return true
}
