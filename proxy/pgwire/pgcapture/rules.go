package pgcapture

import (
	"context"
	"sync"
	"sync/atomic"
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

// followRules picks up rules put in force since the last client message,
// and the end of DDL the session waits for (ddl.go): the cached analyses
// (by text and by shape) are dropped and every prepared statement is
// analysed again (a statement calling a function the new rules know to
// write a configured table is refused or recorded from its next Execute).
// It costs one atomic load and one lock when nothing changed.
func (s *session) followRules() {
	r := s.ddl.rules(s, s.capture.Rules())
	if r == s.rules {
		return
	}
	s.rules, s.shapes = r, r.Shapes()
	clear(s.byText)
	for name, t := range s.texts {
		s.stmts[name] = s.prepare(t.sql, t.types)
	}
}

// WriterCatalog keeps a Capture's rules in step with the server-side
// writers a connector reads from the database's catalog. Call Refresh,
// then Watch, from one goroutine; Request may be called from any.
type WriterCatalog struct {
	capture *capture.Capture
	load    func(context.Context) (extract.Writers, error)
	last    extract.Writers
	loaded  bool

	watching atomic.Bool
	kick     chan struct{}
	mu       sync.Mutex
	waiting  []chan struct{} // closed when a refresh that began after they were made ends
}

// NewWriterCatalog returns a WriterCatalog that reads the writers with
// load. c's configured rules (capture.Config.Rules) are combined with what
// it finds.
func NewWriterCatalog(c *capture.Capture, load func(context.Context) (extract.Writers, error)) *WriterCatalog {
	return &WriterCatalog{capture: c, load: load, kick: make(chan struct{}, 1)}
}

// Request asks Watch to read the catalog now, and returns a channel
// closed when a read that began after the call has ended, whether it
// succeeded or not (the rules it found are in force by then). It returns
// nil when no Watch is running: nothing will read the catalog.
func (w *WriterCatalog) Request() <-chan struct{} {
	if w == nil || !w.watching.Load() {
		return nil
	}
	done := make(chan struct{})
	w.mu.Lock()
	w.waiting = append(w.waiting, done)
	w.mu.Unlock()
	select {
	case w.kick <- struct{}{}:
	default: // a read is requested already; it begins after this one was queued
	}
	return done
}

// takeWaiting returns the requests a read beginning now answers.
func (w *WriterCatalog) takeWaiting() []chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.waiting
	w.waiting = nil
	return out
}

func answer(waiting []chan struct{}) {
	for _, ch := range waiting {
		close(ch)
	}
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
	w.capture.SetRules(w.capture.ConfiguredRules().WithWriters(found))
	w.last, w.loaded = found, true
	functions := make([]string, len(found.Functions))
	for i, f := range found.Functions {
		functions[i] = f.String()
	}
	fired := make([]string, len(found.Fired))
	for i, f := range found.Fired {
		fired[i] = f.String()
	}
	// A partitioned table may have thousands of partitions: their names
	// are logged at debug level only.
	relations := make([]string, len(found.Relations))
	refused := 0
	for i, d := range found.Relations {
		relations[i] = d.String()
		if d.Refuse != "" {
			refused++
		}
	}
	setters := make([]string, len(found.PathSetters))
	for i, p := range found.PathSetters {
		setters[i] = p.Schema + "." + p.Name
	}
	w.capture.Logger().Info("server-side writers of configured tables", "functions", functions, "triggers_and_rules", fired,
		"relations", len(relations), "relations_refused", refused, "search_path_setters", setters,
		"uncovered_relations_refused", len(found.Uncovered))
	w.capture.Logger().Debug("views, partitions and children of configured tables", "relation_names", relations)
	return nil
}

// Watch refreshes every interval, and at once when Request asks, until
// ctx ends or the Capture is closed; after a failed refresh it tries again
// after retry, keeping the writers last found meanwhile.
func (w *WriterCatalog) Watch(ctx context.Context, interval, retry time.Duration) {
	w.watching.Store(true)
	defer func() {
		w.watching.Store(false)
		answer(w.takeWaiting()) // no read will come: do not keep sessions waiting
	}()
	next := time.NewTimer(interval)
	if !w.loaded {
		next.Reset(retry) // the first read failed: do not wait a whole interval
	}
	defer next.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.capture.Done():
			return
		case <-next.C:
		case <-w.kick:
		}
		waiting := w.takeWaiting()
		err := w.Refresh(ctx)
		answer(waiting)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			w.capture.Logger().Warn("could not read the server-side writers of configured tables; keeping the last known ones", "err", err, "retry_in", retry)
			next.Reset(retry)
			continue
		}
		next.Reset(interval)
	}
}
