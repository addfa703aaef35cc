package ledger

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSQLite_IntentsSurviveKill9 runs a writer in a child process, kills it
// with SIGKILL mid-stream and checks that every intent whose Intend had
// returned (and been reported) is in the reopened ledger, with durable
// intents and with IntentNoSync alike: a kill -9 of the process loses
// nothing either way, because SQLite has written the WAL to the operating
// system before the commit returns. It cannot simulate power loss; that
// rests on synchronous=FULL (TestSQLite_UsesWALAndFullSync), which
// IntentNoSync gives up (TestSQLite_IntentNoSyncSkipsTheFsync).
func TestSQLite_IntentsSurviveKill9(t *testing.T) {
	if path := os.Getenv("LETHE_LEDGER_CRASH_CHILD"); path != "" {
		mode, _ := strconv.Atoi(os.Getenv("LETHE_LEDGER_CRASH_SYNC"))
		crashChild(path, IntentSync(mode))
		return
	}
	for _, mode := range []IntentSync{IntentDurable, IntentNoSync} {
		t.Run(mode.String(), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "ledger.db")
			cmd := exec.Command(os.Args[0], "-test.run=^TestSQLite_IntentsSurviveKill9$")
			cmd.Env = append(os.Environ(), "LETHE_LEDGER_CRASH_CHILD="+path, "LETHE_LEDGER_CRASH_SYNC="+strconv.Itoa(int(mode)))
			out, err := cmd.StdoutPipe()
			require.NoError(t, err)
			require.NoError(t, cmd.Start())

			var acked []IntentID
			sc := bufio.NewScanner(out)
			for sc.Scan() && len(acked) < 300 {
				var id int64
				if _, err := fmt.Sscanf(sc.Text(), "intent %d", &id); err == nil {
					acked = append(acked, IntentID(id))
				}
			}
			require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
			cmd.Wait()
			require.Len(t, acked, 300, "the child should have reported 300 intents")

			l, err := OpenSQLite(path, Options{})
			require.NoError(t, err)
			defer l.Close()
			pending := map[IntentID]bool{}
			for _, id := range pendingIDs(t, l) {
				pending[id] = true
			}
			for _, id := range acked {
				require.True(t, pending[id], "intent %d was acknowledged before the kill but is missing", id)
			}
		})
	}
}

// crashChild writes intents from 8 goroutines forever, printing each one
// once Intend has returned.
func crashChild(path string, mode IntentSync) {
	l, err := OpenSQLite(path, Options{IntentSync: mode})
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(1)
	}
	var mu sync.Mutex
	for g := range 8 {
		go func() {
			for i := 0; ; i++ {
				id, err := l.Intend(context.Background(), []Entry{entry("public.docs", strconv.Itoa(g)+"-"+strconv.Itoa(i), "alice")})
				mu.Lock()
				if err != nil {
					fmt.Println("error:", err)
				} else {
					fmt.Printf("intent %d\n", id)
				}
				mu.Unlock()
			}
		}()
	}
	select {}
}

// TestSQLite_DecisionsSurviveKill9: a child intends and confirms from 8
// goroutines and is killed mid-stream, between the two files' commits as
// often as not. In the reopened ledger every reported confirmation is
// confirmed, every reported intent is pending or confirmed, and no intent
// is both.
func TestSQLite_DecisionsSurviveKill9(t *testing.T) {
	if path := os.Getenv("LETHE_LEDGER_DECIDE_CHILD"); path != "" {
		decideChild(path)
		return
	}
	for round := range 5 {
		path := filepath.Join(t.TempDir(), "ledger.db")
		cmd := exec.Command(os.Args[0], "-test.run=^TestSQLite_DecisionsSurviveKill9$")
		cmd.Env = append(os.Environ(), "LETHE_LEDGER_DECIDE_CHILD="+path)
		out, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		intended, confirmed := map[IntentID]bool{}, map[IntentID]bool{}
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var id int64
			if _, err := fmt.Sscanf(sc.Text(), "intent %d", &id); err == nil {
				intended[IntentID(id)] = true
			} else if _, err := fmt.Sscanf(sc.Text(), "confirmed %d", &id); err == nil {
				confirmed[IntentID(id)] = true
			}
			if len(confirmed) == 200*(round+1) {
				// Then read on to the end: what the child printed up to
				// its death counts too.
				require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
			}
		}
		cmd.Wait()
		require.GreaterOrEqual(t, len(confirmed), 200*(round+1), "the child should have reported its confirmations")

		l, err := OpenSQLite(path, Options{})
		require.NoError(t, err)
		pending := map[IntentID]bool{}
		for _, id := range pendingIDs(t, l) {
			pending[id] = true
		}
		recs, err := l.BySubject(context.Background(), testHasher.Hash("alice"))
		require.NoError(t, err)
		done := map[IntentID]bool{}
		for _, r := range recs {
			if r.State == StateConfirmed {
				done[r.Intent] = true
				require.False(t, pending[r.Intent], "intent %d is both confirmed and pending", r.Intent)
			}
		}
		for id := range confirmed {
			require.True(t, done[id], "intent %d was reported confirmed but is not", id)
		}
		t.Logf("round %d: intended %d confirmed %d pending %d done %d", round, len(intended), len(confirmed), len(pending), len(done))
		for id := range intended {
			require.True(t, done[id] || pending[id], "intent %d was reported but is lost", id)
		}
		require.NoError(t, l.Close())
	}
}

// decideChild intends and confirms from 8 goroutines forever, printing
// each step once it has returned.
func decideChild(path string) {
	l, err := OpenSQLite(path, Options{})
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(1)
	}
	var mu sync.Mutex
	say := func(format string, args ...any) {
		mu.Lock()
		fmt.Printf(format+"\n", args...)
		mu.Unlock()
	}
	for g := range 8 {
		go func() {
			for i := 0; ; i++ {
				id, err := l.Intend(context.Background(), []Entry{entry("public.docs", strconv.Itoa(g)+"-"+strconv.Itoa(i), "alice")})
				if err != nil {
					say("error: %v", err)
					continue
				}
				say("intent %d", id)
				if err := l.Confirm(context.Background(), id); err != nil {
					say("error: %v", err)
					continue
				}
				say("confirmed %d", id)
			}
		}()
	}
	select {}
}
