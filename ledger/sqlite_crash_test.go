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
// returned (and been reported) is in the reopened ledger. It cannot
// simulate power loss; that rests on synchronous=FULL
// (TestSQLite_UsesWALAndFullSync).
func TestSQLite_IntentsSurviveKill9(t *testing.T) {
	if path := os.Getenv("LETHE_LEDGER_CRASH_CHILD"); path != "" {
		crashChild(path)
		return
	}
	path := filepath.Join(t.TempDir(), "ledger.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestSQLite_IntentsSurviveKill9$")
	cmd.Env = append(os.Environ(), "LETHE_LEDGER_CRASH_CHILD="+path)
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
}

// crashChild writes intents from 8 goroutines forever, printing each one
// once Intend has returned.
func crashChild(path string) {
	l, err := OpenSQLite(path, Options{})
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
