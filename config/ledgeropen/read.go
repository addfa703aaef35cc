package ledgeropen

import (
	"context"
	"fmt"
	"io"

	"github.com/lethe-privacy/lethe/config"
	"github.com/lethe-privacy/lethe/ledger"
)

// Reader reads the ledger a configuration names, as lethe-proxy ledger
// does: the salt is compared with the ledger's, never recorded. Each
// read opens the ledger and closes it again.
type Reader struct {
	Store config.LedgerStore
	// ConfigPath places the default SQLite file.
	ConfigPath string
	// Hasher is the salt (nil when none is set); WriteSubject needs it.
	Hasher *ledger.Hasher
}

// Open opens the ledger for reading and says where it is, also on error.
func (r Reader) Open() (*ledger.Handle, string, error) {
	return Open(r.Store, r.ConfigPath, ledger.Options{}, Salt{Hasher: r.Hasher})
}

// WriteCounts writes the ledger's records per table and state
// (WriteCounts).
func (r Reader) WriteCounts(ctx context.Context, out io.Writer) error {
	return r.read(func(l *ledger.Handle) error {
		counts, err := l.Counts(ctx)
		if err == nil {
			WriteCounts(out, counts)
		}
		return err
	})
}

// WriteSubject writes the records the ledger holds of subject
// (WriteRecords), found by its hash under r.Hasher.
func (r Reader) WriteSubject(ctx context.Context, subject string, out io.Writer) error {
	return r.read(func(l *ledger.Handle) error {
		recs, err := l.BySubject(ctx, r.Hasher.Hash(subject))
		if err == nil {
			WriteRecords(out, recs)
		}
		return err
	})
}

func (r Reader) read(f func(*ledger.Handle) error) error {
	l, where, err := r.Open()
	if err != nil {
		return fmt.Errorf("opening %s: %w", where, err)
	}
	defer l.Close()
	return f(l)
}
