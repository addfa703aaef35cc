package capture

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/lethe-privacy/lethe/ledger"
)

// sinkFunc is a LateWriteSink that records what it was handed.
type sinkFunc func(ctx context.Context, store ledger.Store, table, subject string) error

func (f sinkFunc) DeleteLateWrite(ctx context.Context, store ledger.Store, table, subject string) error {
	return f(ctx, store, table, subject)
}

// observed records which of Observe and ObserveNoSync took each batch.
type observed struct {
	ledger.InitialReads
	synced, unsynced [][]ledger.Change
}

func (o *observed) Observe(_ context.Context, c []ledger.Change) error {
	o.synced = append(o.synced, c)
	return nil
}

func (o *observed) ObserveNoSync(_ context.Context, c []ledger.Change) error {
	o.unsynced = append(o.unsynced, c)
	return nil
}

func followHasher(t *testing.T) *ledger.Hasher {
	t.Helper()
	h, err := ledger.NewHasher([]byte("follow-test-salt-0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// forget.late_writes: delete hands the row to the sink forget's engine
// registered after the core was built; flag only logs it; neither log
// holds the subject.
func TestLateWrite_DeletedThroughTheSinkTheEngineRegisteredOrOnlyLogged(t *testing.T) {
	for _, deletes := range []bool{true, false} {
		var logs bytes.Buffer
		c := New(Config{Hasher: followHasher(t), DeleteLateWrites: deletes, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		var handed []string
		c.OnLateWrite(sinkFunc(func(_ context.Context, store ledger.Store, table, subject string) error {
			handed = append(handed, string(store)+" "+table+" "+subject)
			return nil
		}))
		if err := c.LateWrite(context.Background(), ledger.StorePostgres, "public.docs", "alice@example.com"); err != nil {
			t.Fatalf("delete=%v: LateWrite: %v", deletes, err)
		}
		c.Close()
		want := []string(nil)
		if deletes {
			want = []string{string(ledger.StorePostgres) + " public.docs alice@example.com"}
		}
		if strings.Join(handed, "|") != strings.Join(want, "|") {
			t.Errorf("delete=%v: the sink was handed %q, want %q", deletes, handed, want)
		}
		if !strings.Contains(logs.String(), "late write") || strings.Contains(logs.String(), "alice") {
			t.Errorf("delete=%v: the late write is logged by its HMAC alone: %s", deletes, logs.String())
		}
	}
}

// A late write to delete before the engine has registered, and a sink's
// failure, are errors: the follower hands the row over again later
// instead of moving past it undeleted.
func TestLateWrite_WithoutASinkOrWhenItFailsIsAnError(t *testing.T) {
	c := New(Config{Hasher: followHasher(t), DeleteLateWrites: true, Logger: slog.New(slog.DiscardHandler)})
	defer c.Close()
	if err := c.LateWrite(context.Background(), ledger.StorePostgres, "public.docs", "bob"); !errors.Is(err, ErrNoLateWriteSink) {
		t.Fatalf("LateWrite with no sink = %v, want ErrNoLateWriteSink", err)
	}
	failed := errors.New("store down")
	c.OnLateWrite(sinkFunc(func(context.Context, ledger.Store, string, string) error { return failed }))
	if err := c.LateWrite(context.Background(), ledger.StorePostgres, "public.docs", "bob"); !errors.Is(err, failed) {
		t.Fatalf("LateWrite with a failing sink = %v, want its error", err)
	}
}

// A follower's changes reach the core's ledger with or without a fsync as
// it asks, and its subjects are hashed with the core's salt.
func TestObserve_FollowerRecordsThroughTheCore(t *testing.T) {
	o := &observed{}
	h := followHasher(t)
	c := New(Config{Hasher: h, Observer: o})
	defer c.Close()
	if c.HashSubject("carol") != h.Hash("carol") {
		t.Fatal("HashSubject is not the core's hasher's")
	}
	durable := []ledger.Change{{Store: ledger.StorePostgres, Table: "public.docs", RecordID: "1"}}
	later := []ledger.Change{{Store: ledger.StorePostgres, Table: "public.docs", RecordID: "2"}}
	if err := c.Observe(context.Background(), later, false); err != nil {
		t.Fatal(err)
	}
	if err := c.Observe(context.Background(), durable, true); err != nil {
		t.Fatal(err)
	}
	if len(o.synced) != 1 || o.synced[0][0].RecordID != "1" || len(o.unsynced) != 1 || o.unsynced[0][0].RecordID != "2" {
		t.Fatalf("synced %v, unsynced %v", o.synced, o.unsynced)
	}
	if err := New(Config{Hasher: h}).Observe(context.Background(), durable, true); err == nil {
		t.Fatal("Observe without Config.Observer succeeded")
	}
}

// holding is a ledger.Holder holding the entries of one record id.
type holding string

func (h holding) Holds(_ context.Context, entries []ledger.Entry) ([]bool, error) {
	out := make([]bool, len(entries))
	for i, e := range entries {
		out[i] = e.RecordID == string(h)
	}
	return out, nil
}

// A scanning follower asks the core's ledger which records it holds; a
// core without one says so instead of answering "none".
func TestHolds_AsksTheCoresLedger(t *testing.T) {
	entries := []ledger.Entry{{Store: ledger.StorePinecone, Table: "idx/ns", RecordID: "a"}, {Store: ledger.StorePinecone, Table: "idx/ns", RecordID: "b"}}
	c := New(Config{Hasher: followHasher(t), Holder: holding("b")})
	defer c.Close()
	held, err := c.Holds(context.Background(), entries)
	if err != nil || len(held) != 2 || held[0] || !held[1] {
		t.Fatalf("Holds = %v, %v; want [false true]", held, err)
	}
	bare := New(Config{Hasher: followHasher(t)})
	defer bare.Close()
	if _, err := bare.Holds(context.Background(), entries); err == nil || !strings.Contains(err.Error(), "Config.Holder") {
		t.Fatalf("Holds without a Holder = %v; want an error naming Config.Holder", err)
	}
}
