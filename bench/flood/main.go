// Command flood is bench/flood.sh's client: one session that sends
// Bind/Execute pairs of an INSERT into a captured table without a Sync,
// as no library does, while it samples the proxy's resident memory.
//
// Environment: FLOOD_DSN (the proxy), FLOOD_PROXY_PID, FLOOD_TABLE,
// FLOOD_N (pairs), FLOOD_READ (1: read the server's answers as they come;
// 0: never read), FLOOD_SYNC (1: end with a Sync and wait for the
// answer; 0: disconnect without one), FLOOD_MAX_S (stop sending after
// this many seconds: a proxy that stops reading a client that does not
// read is right to, and the flood must end by itself) [120].
package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "flood:", err)
		os.Exit(1)
	}
}

func run() error {
	n, err := strconv.Atoi(env("FLOOD_N", "1000000"))
	if err != nil {
		return fmt.Errorf("FLOOD_N: %w", err)
	}
	pid := env("FLOOD_PROXY_PID", "")
	rss := &sampler{pid: pid}
	stop := rss.start()
	defer stop()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pc, err := pgconn.Connect(ctx, env("FLOOD_DSN", ""))
	if err != nil {
		return err
	}
	hc, err := pc.Hijack()
	if err != nil {
		return err
	}
	conn, fe := hc.Conn, hc.Frontend
	defer conn.Close()

	answers := make(chan string, 1)
	var completions atomic.Int64
	if env("FLOOD_READ", "1") == "1" {
		go func() { answers <- readAnswers(fe, &completions) }()
	}

	start := time.Now()
	maxS, err := strconv.Atoi(env("FLOOD_MAX_S", "120"))
	if err != nil {
		return fmt.Errorf("FLOOD_MAX_S: %w", err)
	}
	conn.SetWriteDeadline(start.Add(time.Duration(maxS) * time.Second))
	fe.Send(&pgproto3.Parse{Name: "flood", Query: "INSERT INTO " + env("FLOOD_TABLE", "") + " (id, user_id) VALUES ($1, $2)"})
	var refused string
	for i := range n {
		id := []byte("flood-" + strconv.Itoa(i))
		subject := []byte("user" + strconv.Itoa(i%1000) + "@example.com")
		fe.Send(&pgproto3.Bind{PreparedStatement: "flood", Parameters: [][]byte{id, subject}})
		fe.Send(&pgproto3.Execute{})
		if i%256 == 255 {
			if err := fe.Flush(); err != nil {
				refused = fmt.Sprintf("sending stopped after %d pairs: %v", i+1, err)
				break
			}
		}
	}
	sent := time.Since(start)
	outcome := "disconnected without Sync"
	if refused != "" {
		outcome = refused
	} else if env("FLOOD_SYNC", "0") == "1" {
		fe.Send(&pgproto3.Sync{})
		if err := fe.Flush(); err != nil {
			return err
		}
		select {
		case outcome = <-answers:
		case <-time.After(5 * time.Minute):
			outcome = "no answer to Sync within 5 minutes"
		}
	}
	conn.Close()
	peak := rss.peak.Load()
	time.Sleep(10 * time.Second) // the proxy releases the session meanwhile
	after := rss.now()
	fmt.Printf("pairs=%d sent_s=%.1f completions=%d peak_rss_mib=%.1f rss_10s_after_close_mib=%.1f outcome=%q\n",
		n, sent.Seconds(), completions.Load(), mib(peak), mib(after), outcome)
	return nil
}

// readAnswers reads the server's answers until ReadyForQuery or the end of
// the connection, and says how the flood ended.
func readAnswers(fe *pgproto3.Frontend, completions *atomic.Int64) string {
	var firstErr string
	for {
		msg, err := fe.Receive()
		if err != nil {
			if err == io.EOF || firstErr != "" {
				return "connection ended; " + firstErr
			}
			return "connection ended: " + err.Error()
		}
		switch m := msg.(type) {
		case *pgproto3.CommandComplete:
			completions.Add(1)
		case *pgproto3.ErrorResponse:
			if firstErr == "" {
				firstErr = m.Code + " " + m.Message
			}
		case *pgproto3.ReadyForQuery:
			if firstErr != "" {
				return "error: " + firstErr
			}
			return "committed"
		}
	}
}

// sampler records the peak VmRSS of a process every 50 ms.
type sampler struct {
	pid  string
	peak atomic.Int64
}

func (s *sampler) start() (stop func()) {
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			if v := s.now(); v > s.peak.Load() {
				s.peak.Store(v)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(done) }
}

// now is the process's VmRSS in bytes, 0 when unknown.
func (s *sampler) now() int64 {
	f, err := os.Open("/proc/" + s.pid + "/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
