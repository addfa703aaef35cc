//go:build integration

package integration

import (
	"context"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/ledger"
)

// startProxyBinary starts lethe-proxy with capture of public.<table> and
// waits until it listens. The process is killed when the test ends.
func startProxyBinary(t *testing.T, bin, cfg, addr string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(bin, "serve", "--config", cfg)
	cmd.Env = append(os.Environ(), "LETHE_SUBJECT_SALT="+hex.EncodeToString(testSalt))
	collectLogFile(t, cfg+".log")
	logf, err := os.OpenFile(cfg+".log", os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	require.NoError(t, err)
	defer logf.Close()
	cmd.Stdout, cmd.Stderr = logf, logf
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for range 200 {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return cmd
		}
		time.Sleep(25 * time.Millisecond)
	}
	logs, _ := os.ReadFile(cfg + ".log")
	t.Fatalf("proxy did not start: %s", logs)
	return nil
}

// TestCapture_KillNineUnderLoadLosesNoTag kills the proxy with SIGKILL
// again and again while clients write, restarts it, and then checks the
// invariant: every row committed to the configured table is in the ledger
// under its subject, and no confirmed tag names a row that never committed.
func TestCapture_KillNineUnderLoadLosesNoTag(t *testing.T) {
	db := loadTestDB(t)
	pgxTable(t, db, "cap_crash", "id text PRIMARY KEY, user_id text, body text")
	bin := buildProxy(t)
	dir := t.TempDir()
	addr := freePort(t)
	cfg := filepath.Join(dir, "lethe.yaml")
	writeConfig := func(store string) {
		require.NoError(t, os.WriteFile(cfg, []byte(fmt.Sprintf(`postgres:
  listen: %s
  upstream: %s
capture:
  ledger:
    sqlite: ledger.db
  database: %s
  store: %q
  wal: off # this test is about the write-ahead intents alone
  tables:
    - table: public.cap_crash
      id: id
      subjects: [user_id]
log:
  level: info
`, addr, db.Addr(), db.DB, store)), 0o600))
	}
	writeConfig("")

	const rounds, writers = 5, 4
	var seq int64
	var mu sync.Mutex
	for round := range rounds {
		proc := startProxyBinary(t, bin, cfg, addr)
		var wg sync.WaitGroup
		stop := make(chan struct{})
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				conn, err := pgx.Connect(context.Background(), db.URL(addr, ""))
				if err != nil {
					return
				}
				defer conn.Close(context.Background())
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					mu.Lock()
					seq++
					id := fmt.Sprintf("r%d-w%d-%d", round, w, seq)
					mu.Unlock()
					subject := fmt.Sprintf("user%d@example.com", i%3)
					ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
					if i%4 == 3 { // an explicit transaction now and then
						tx, err := conn.Begin(ctx)
						if err == nil {
							_, err = tx.Exec(ctx, "INSERT INTO cap_crash (id, user_id, body) VALUES ($1, $2, 'x')", id, subject)
							if err == nil {
								err = tx.Commit(ctx)
							}
						}
						cancel()
						if err != nil {
							return
						}
						continue
					}
					_, err := conn.Exec(ctx, "INSERT INTO cap_crash (id, user_id, body) VALUES ($1, $2, 'x')", id, subject)
					cancel()
					if err != nil {
						return // the proxy died under us
					}
				}
			}()
		}
		// Kill mid-load: after a while, and once this round has written
		// enough that a loaded machine still exercises the invariant.
		mu.Lock()
		roundStart := seq
		mu.Unlock()
		time.Sleep(time.Duration(300+100*round) * time.Millisecond)
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			mu.Lock()
			enough := seq-roundStart >= 20
			mu.Unlock()
			if enough {
				break
			}
		}
		require.NoError(t, proc.Process.Signal(syscall.SIGKILL))
		proc.Wait()
		close(stop)
		wg.Wait()
	}

	committed, tagged, pendingBefore := crashInvariants(t, db, dir)
	require.Greater(t, pendingBefore, 0, "kill -9 left intents pending (else recovery is not exercised)")

	// Restart with capture.store set: the proxy resolves the pending intents
	// by asking the database, and the invariants still hold.
	writeConfig(fmt.Sprintf("host=%s port=%s user=%s dbname=%s sslmode=disable", db.Host, db.Port, db.User, db.DB))
	t.Setenv("PGPASSWORD", db.Password)
	proc := startProxyBinary(t, bin, cfg, addr)
	require.NoError(t, proc.Process.Signal(syscall.SIGTERM))
	require.NoError(t, proc.Wait())
	logs, _ := os.ReadFile(cfg + ".log")
	require.Contains(t, string(logs), "pending intents recovered")
	committed2, tagged2, pendingAfter := crashInvariants(t, db, dir)
	assert.Equal(t, len(committed), len(committed2))
	assert.Zero(t, pendingAfter, "every pending intent named ids the database could be asked about")
	assert.LessOrEqual(t, len(tagged2), len(tagged), "recovery only drops or confirms")

	// The CLI shows the same ledger: counts per table, and one subject's
	// records with the subject read from stdin.
	out, err := exec.Command(bin, "ledger", "counts", "--config", cfg).CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Regexp(t, `postgres\s+public\.cap_crash\s+confirmed\s+\d+`, string(out))
	sub := exec.Command(bin, "ledger", "subject", "--config", cfg)
	sub.Env = append(os.Environ(), "LETHE_SUBJECT_SALT="+hex.EncodeToString(testSalt))
	sub.Stdin = strings.NewReader("user1@example.com\n")
	out, err = sub.CombinedOutput()
	require.NoError(t, err, "%s", out)
	lines := strings.Count(string(out), "public.cap_crash")
	want := 0
	for _, s := range committed {
		if s == "user1@example.com" {
			want++
		}
	}
	assert.GreaterOrEqual(t, lines, want, "one line per record of user1")
	assert.NotContains(t, string(out), "user1@example.com", "the subject is not echoed")
}

// crashInvariants checks the ledger left in dir against the table: every
// committed row is tagged, no confirmed tag names a row that never
// committed. It returns the committed rows (id → subject), the tagged ids
// with their best state, and how many tags are still pending.
func crashInvariants(t *testing.T, db testDB, dir string) (map[string]string, map[string]ledger.State, int) {
	t.Helper()
	l, err := ledger.OpenSQLite(filepath.Join(dir, "ledger.db"), ledger.Options{})
	require.NoError(t, err)
	defer l.Close()
	h, err := ledger.NewHasher(testSalt)
	require.NoError(t, err)

	rows, err := connect(t, db.URL(db.Addr(), "")).Query(ctxT(t), "SELECT id, user_id FROM cap_crash")
	require.NoError(t, err)
	committed := map[string]string{}
	for rows.Next() {
		var id, subject string
		require.NoError(t, rows.Scan(&id, &subject))
		committed[id] = subject
	}
	require.NoError(t, rows.Err())
	require.Greater(t, len(committed), 50, "the load wrote rows")

	tagged := map[string]ledger.State{} // record id → best state
	for i := range 3 {
		recs, err := l.BySubject(context.Background(), h.Hash(fmt.Sprintf("user%d@example.com", i)))
		require.NoError(t, err)
		for _, r := range recs {
			if r.Table == "public.cap_crash" && tagged[r.RecordID] != ledger.StateConfirmed {
				tagged[r.RecordID] = r.State
			}
		}
	}
	var untracked, confirmedGhosts, pending int
	for id := range committed {
		if _, ok := tagged[id]; !ok {
			untracked++
		}
	}
	for id, st := range tagged {
		if st == ledger.StatePending {
			pending++
		}
		if _, ok := committed[id]; !ok && st == ledger.StateConfirmed {
			confirmedGhosts++
		}
	}
	t.Logf("%d rows committed, %d tagged (%d still pending, resolved by recovery)", len(committed), len(tagged), pending)
	assert.Zero(t, untracked, "committed rows with no tag")
	assert.Zero(t, confirmedGhosts, "confirmed tags for rows that never committed")
	return committed, tagged, pending
}
