package connector

import (
	"context"
	"fmt"
	"sync"
)

// Wings are a proxy's wings, started and stopped together in the order
// Wing's contract gives: Listen on every wing, then Prepare on every wing,
// then Serve; Shutdown, then Close.
type Wings []Wing

// Names are the wings' names, in order.
func (ws Wings) Names() []string {
	names := make([]string, 0, len(ws))
	for _, w := range ws {
		names = append(names, w.Name())
	}
	return names
}

// Listen binds every wing's listeners, stopping at the first error.
func (ws Wings) Listen() error {
	for _, w := range ws {
		if err := w.Listen(); err != nil {
			return err
		}
	}
	return nil
}

// Prepare prepares every wing in turn, stopping at the first error,
// which names the wing.
func (ws Wings) Prepare(ctx context.Context) error {
	for _, w := range ws {
		if err := w.Prepare(ctx); err != nil {
			return fmt.Errorf("%s: %w", w.Name(), err)
		}
	}
	return nil
}

// Serve starts every wing's Serve in a goroutine of its own and returns
// at once.
func (ws Wings) Serve() *Serving {
	s := &Serving{wings: ws, failed: make(chan error, len(ws)), served: make([]chan error, len(ws))}
	for i, w := range ws {
		s.served[i] = make(chan error, 1)
		go func() {
			err := w.Serve()
			s.served[i] <- err
			if err != nil {
				s.failed <- fmt.Errorf("%s listener: %w", w.Name(), err)
			}
		}()
	}
	return s
}

// Close closes every wing.
func (ws Wings) Close() {
	for _, w := range ws {
		w.Close()
	}
}

// Serving is the wings Serve started.
type Serving struct {
	wings  Wings
	failed chan error
	served []chan error
}

// Failed receives each failure of a wing's Serve, as "<wing> listener:
// <error>".
func (s *Serving) Failed() <-chan error { return s.failed }

// Shutdown shuts every wing down at once, all within ctx, and waits until
// each wing's Serve has returned; it returns what each Serve returned, in
// wing order (nil for a wing stopped cleanly).
func (s *Serving) Shutdown(ctx context.Context) []error {
	errs := make([]error, len(s.wings))
	var wg sync.WaitGroup
	for i, w := range s.wings {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.Shutdown(ctx)
			errs[i] = <-s.served[i]
		}()
	}
	wg.Wait()
	return errs
}
