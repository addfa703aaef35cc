package pgwire

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
)

// The relay benchmarks run a pgbench -S exchange (one simple Query, or a
// prepared Bind/Execute/Sync, answered by one row) from a client through a
// Server over loopback to a scripted upstream, with and without an
// Observer. The Observer does nothing, so the difference between the two is
// the relay's own observing path: which messages are inspected, how they
// are handed over, and any flush or allocation that adds.
//
//	go test -run XXX -bench BenchmarkRelay -benchmem ./proxy/pgwire/

// idleObserver observes every session and never refuses; like capture's
// sessions it is a Waiter and a Streamer, so the relay takes the same paths.
type idleObserver struct{}

func (idleObserver) Open(SessionInfo) Session { return idleSession{} }

type idleSession struct{}

func (idleSession) ClientMessage(Message) *Refusal { return nil }
func (idleSession) ServerMessage(Message)          {}
func (idleSession) Close()                         {}
func (idleSession) WillWait(byte) bool             { return false }
func (idleSession) NeverRefuses(typ byte) bool     { return typ == 'B' }

// selectAnswer is what PostgreSQL answers to pgbench -S's SELECT abalance:
// (simple) RowDescription or (prepared) BindComplete, one DataRow,
// CommandComplete and ReadyForQuery.
func selectAnswer(prepared bool) []byte {
	var out []byte
	if prepared {
		out, _ = (&pgproto3.BindComplete{}).Encode(out)
	} else {
		out, _ = (&pgproto3.RowDescription{Fields: []pgproto3.FieldDescription{{
			Name: []byte("abalance"), DataTypeOID: 23, DataTypeSize: 4, TypeModifier: -1,
		}}}).Encode(out)
	}
	out, _ = (&pgproto3.DataRow{Values: [][]byte{[]byte("0")}}).Encode(out)
	out, _ = (&pgproto3.CommandComplete{CommandTag: []byte("SELECT 1")}).Encode(out)
	out, _ = (&pgproto3.ReadyForQuery{TxStatus: 'I'}).Encode(out)
	return out
}

// selectRequest is one pgbench -S transaction as the client sends it.
func selectRequest(prepared bool) []byte {
	var out []byte
	if !prepared {
		out, _ = (&pgproto3.Query{String: "SELECT abalance FROM pgbench_accounts WHERE aid = 4711;"}).Encode(out)
		return out
	}
	out, _ = (&pgproto3.Bind{
		PreparedStatement: "P0_1", ParameterFormatCodes: []int16{0}, Parameters: [][]byte{[]byte("4711")},
	}).Encode(out)
	out, _ = (&pgproto3.Execute{}).Encode(out)
	out, _ = (&pgproto3.Sync{}).Encode(out)
	return out
}

// scriptedUpstream accepts one connection, authenticates it and answers
// every Query or Sync with answer.
func scriptedUpstream(tb testing.TB, answer []byte) *Upstream {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ln.Close() })
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		be := pgproto3.NewBackend(conn, conn)
		if _, err := be.ReceiveStartupMessage(); err != nil {
			return
		}
		be.Send(&pgproto3.AuthenticationOk{})
		be.Send(&pgproto3.BackendKeyData{ProcessID: 1, SecretKey: []byte{0, 0, 0, 2}})
		be.Send(&pgproto3.ReadyForQuery{TxStatus: 'I'})
		if be.Flush() != nil {
			return
		}
		r := bufio.NewReaderSize(conn, 4096)
		var hdr [5]byte
		for {
			if _, err := io.ReadFull(r, hdr[:]); err != nil {
				return
			}
			n := int(hdr[1])<<24 | int(hdr[2])<<16 | int(hdr[3])<<8 | int(hdr[4])
			if _, err := r.Discard(n - 4); err != nil {
				return
			}
			if hdr[0] == 'Q' || hdr[0] == 'S' {
				if _, err := conn.Write(answer); err != nil {
					return
				}
			}
		}
	}()
	return &Upstream{Addr: ln.Addr().String()}
}

// relayClient starts a Server in front of a scripted upstream and returns a
// client connection that has finished startup.
func relayClient(tb testing.TB, obs Observer, prepared bool) net.Conn {
	srv := &Server{
		Upstream: scriptedUpstream(tb, selectAnswer(prepared)), Observer: obs,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	go srv.Serve(ln)
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	})
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { conn.Close() })
	fe := pgproto3.NewFrontend(conn, conn)
	fe.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersionNumber, Parameters: map[string]string{"user": "bench", "database": "bench"}})
	if err := fe.Flush(); err != nil {
		tb.Fatal(err)
	}
	for {
		msg, err := fe.Receive()
		if err != nil {
			tb.Fatal(err)
		}
		if _, ok := msg.(*pgproto3.ReadyForQuery); ok {
			return conn
		}
	}
}

func benchmarkRelaySelect(b *testing.B, obs Observer) {
	for _, mode := range []struct {
		name     string
		prepared bool
	}{{"simple", false}, {"prepared", true}} {
		b.Run(mode.name, func(b *testing.B) {
			conn := relayClient(b, obs, mode.prepared)
			req, answer := selectRequest(mode.prepared), selectAnswer(mode.prepared)
			got := make([]byte, len(answer))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := conn.Write(req); err != nil {
					b.Fatal(err)
				}
				if _, err := io.ReadFull(conn, got); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkRelay_SelectWithoutObserver(b *testing.B) { benchmarkRelaySelect(b, nil) }

func BenchmarkRelay_SelectWithObserver(b *testing.B) { benchmarkRelaySelect(b, idleObserver{}) }

// TestRelay_ObservingPathDoesNotAllocate: with an Observer installed, the
// relay hands a pgbench -S exchange to it in both directions (Query and
// Bind/Execute/Sync up; RowDescription or BindComplete, DataRow,
// CommandComplete, ReadyForQuery down) without allocating: what capture
// costs a read is the Observer's own work, not the relay's.
func TestRelay_ObservingPathDoesNotAllocate(t *testing.T) {
	for _, prepared := range []bool{false, true} {
		ss := testSession()
		ss.obs = idleSession{}
		request, answer := &burstReader{burst: selectRequest(prepared)}, &burstReader{burst: selectAnswer(prepared)}
		up := newPump(request, io.Discard, 64<<20)
		up.inspect, up.handle = ss.inspectClient, ss.fromClient
		up.flushFirst, up.stream = idleSession{}.WillWait, idleSession{}.NeverRefuses
		down := newPump(answer, io.Discard, 0)
		down.inspect, down.handle = ss.inspectServer, ss.fromServer
		allocs := testing.AllocsPerRun(20, func() {
			request.n, answer.n = 100, 100
			if err := up.run(); err != io.EOF {
				t.Fatalf("client side: %v", err)
			}
			if err := down.run(); err != io.EOF {
				t.Fatalf("server side: %v", err)
			}
		})
		if allocs != 0 {
			t.Errorf("prepared=%v: %v allocations per 100 exchanges, want none", prepared, allocs)
		}
		if got := ss.answered.Load(); got != ss.sent.Load() || got != 21*100 {
			t.Errorf("prepared=%v: %d sent, %d answered; want %d each", prepared, ss.sent.Load(), got, 21*100)
		}
	}
}
