package pgcapture

import (
	"context"
	"time"

	"github.com/lethe-privacy/lethe/capture"
	"github.com/lethe-privacy/lethe/extract"
)

// A session follows the rules in force (capture.Capture.SetRules) from its
// next client message: statements are analysed again, prepared ones
// included. Portals already bound keep the analysis they were bound with.

// stmtText is what a Parse said, kept so that the statement can be
// analysed again under new rules: a statement that names nothing
// configured shares one plain entry and keeps no text of its own.
type stmtText struct {
	sql   string
	types []uint32
}

// followRules picks up rules put in force since the last client message:
// the cached analyses are dropped and every prepared statement is
// analysed again (a statement calling a function the new rules know to
// write a configured table is refused or recorded from its next Execute).
// It costs one atomic load when nothing changed.
func (s *session) followRules() {
	r := s.c.Rules()
	if r == s.rules {
		return
	}
	s.rules = r
	clear(s.byText)
	for name, t := range s.texts {
		s.stmts[name] = s.prepare(t.sql, t.types)
	}
}

// WriterCatalog keeps a Capture's rules in step with the server-side
// writers a connector reads from the database's catalog. It is not safe
// for concurrent use: call Refresh, then Watch, from one goroutine.
type WriterCatalog struct {
	c      *capture.Capture
	load   func(context.Context) (extract.Writers, error)
	last   extract.Writers
	loaded bool
}

// NewWriterCatalog returns a WriterCatalog that reads the writers with
// load. c's configured rules (capture.Config.Rules) are combined with what
// it finds.
func NewWriterCatalog(c *capture.Capture, load func(context.Context) (extract.Writers, error)) *WriterCatalog {
	return &WriterCatalog{c: c, load: load}
}

// Refresh reads the writers and, when they changed, puts rules with them
// in force and logs them (names of functions, relations and tables only).
// On error the rules in force stay as they are.
func (w *WriterCatalog) Refresh(ctx context.Context) error {
	found, err := w.load(ctx)
	if err != nil {
		return err
	}
	if w.loaded && found.Equal(w.last) {
		return nil
	}
	w.c.SetRules(w.c.ConfiguredRules().WithWriters(found))
	w.last, w.loaded = found, true
	functions := make([]string, len(found.Functions))
	for i, f := range found.Functions {
		functions[i] = f.String()
	}
	fired := make([]string, len(found.Fired))
	for i, f := range found.Fired {
		fired[i] = f.String()
	}
	w.c.Logger().Info("server-side writers of configured tables", "functions", functions, "triggers_and_rules", fired)
	return nil
}

// Watch refreshes every interval until ctx ends or the Capture is closed;
// after a failed refresh it tries again after retry, keeping the writers
// last found meanwhile.
func (w *WriterCatalog) Watch(ctx context.Context, interval, retry time.Duration) {
	next := time.NewTimer(interval)
	if !w.loaded {
		next.Reset(retry) // the first read failed: do not wait a whole interval
	}
	defer next.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.c.Done():
			return
		case <-next.C:
		}
		if err := w.Refresh(ctx); err != nil {
			if ctx.Err() != nil {
				return
			}
			w.c.Logger().Warn("could not read the server-side writers of configured tables; keeping the last known ones", "err", err, "retry_in", retry)
			next.Reset(retry)
			continue
		}
		next.Reset(interval)
	}
}
