package connector

import (
	"context"
	"errors"
	"reflect"
	"testing"
)

// fakeWing is a wing whose steps are recorded and whose errors are set;
// its Serve returns serveErr at once when set, else waits for Shutdown.
type fakeWing struct {
	Wing                          // the steps a test does not call
	name                          string
	listenErr, prepareErr, served error
	steps                         *[]string
	stop                          chan struct{}
}

func newFake(name string, steps *[]string) *fakeWing {
	return &fakeWing{name: name, steps: steps, stop: make(chan struct{})}
}

func (f *fakeWing) Name() string { return f.name }
func (f *fakeWing) Listen() error {
	*f.steps = append(*f.steps, "listen "+f.name)
	return f.listenErr
}
func (f *fakeWing) Prepare(context.Context) error {
	*f.steps = append(*f.steps, "prepare "+f.name)
	return f.prepareErr
}
func (f *fakeWing) Serve() error {
	if f.served != nil {
		return f.served
	}
	<-f.stop
	return nil
}
func (f *fakeWing) Shutdown(context.Context) error {
	close(f.stop)
	return nil
}
func (f *fakeWing) Close() { *f.steps = append(*f.steps, "close "+f.name) }

// Listen and Prepare go wing by wing and stop at the first error, which
// Prepare's names the wing.
func TestWings_ListenAndPrepareStopAtTheFirstError(t *testing.T) {
	var steps []string
	pg, pc := newFake("postgres", &steps), newFake("pinecone", &steps)
	ws := Wings{pg, pc}
	pg.listenErr = errors.New("port taken")
	if err := ws.Listen(); err == nil || err.Error() != "port taken" {
		t.Fatalf("Listen: %v", err)
	}
	pg.listenErr, pg.prepareErr = nil, errors.New("no slot")
	if err := ws.Prepare(context.Background()); err == nil || err.Error() != "postgres: no slot" {
		t.Fatalf("Prepare: %v", err)
	}
	ws.Close()
	want := []string{"listen postgres", "prepare postgres", "close postgres", "close pinecone"}
	if !reflect.DeepEqual(steps, want) {
		t.Fatalf("steps %v, want %v", steps, want)
	}
	if got := ws.Names(); !reflect.DeepEqual(got, []string{"postgres", "pinecone"}) {
		t.Fatalf("Names: %v", got)
	}
}

// A wing whose Serve fails is reported on Failed, named; Shutdown stops
// the others and returns what each Serve returned, in wing order.
func TestServing_AFailureIsNamedAndShutdownWaitsForEveryWing(t *testing.T) {
	var steps []string
	pg, pc := newFake("postgres", &steps), newFake("pinecone", &steps)
	pc.served = errors.New("accept: too many open files")
	s := Wings{pg, pc}.Serve()
	if err := <-s.Failed(); err.Error() != "pinecone listener: accept: too many open files" {
		t.Fatalf("Failed: %v", err)
	}
	errs := s.Shutdown(context.Background())
	if len(errs) != 2 || errs[0] != nil || errs[1] != pc.served {
		t.Fatalf("Shutdown: %v", errs)
	}
}
