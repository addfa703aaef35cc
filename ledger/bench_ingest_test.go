package ledger

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// BenchmarkSQLiteIngest is the SQLite ledger's share of the proxy's work
// on vector ingest: one op is a 100-row INSERT's intent, waited for as the
// proxy waits, and its confirmation, held and sent with 499 others as the
// proxy's capture does (capture.DefaultConfirmHold). Rows have UUID-like
// ids and 1,000 subjects. It reports the process's CPU and the bytes it
// wrote (syscalls, from /proc/self/io) per row, with the ledger growing
// by 100 rows per op:
//
//	go test -run '^$' -bench SQLiteIngest -benchtime 2000x ./ledger/
func BenchmarkSQLiteIngest(b *testing.B) {
	l, err := OpenSQLite(filepath.Join(b.TempDir(), "ledger.db"), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	ctx := context.Background()
	const rowsPerOp, held = 100, 500
	entries := make([]Entry, rowsPerOp)
	var (
		wg      sync.WaitGroup
		pending []IntentID
	)
	confirm := func() {
		for _, id := range pending {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := l.Confirm(ctx, id); err != nil {
					b.Error(err)
				}
			}()
		}
		pending = nil
	}
	cpu0, wrote0 := processCPU(), processWrote()
	b.ResetTimer()
	for i := range b.N {
		for j := range entries {
			k := i*rowsPerOp + j
			entries[j] = Entry{Store: StorePostgres, Table: "public.docs",
				RecordID: fmt.Sprintf("%08x-0000-4000-8000-%012x", uint32(k*2654435761), k),
				Subject:  testHasher.Hash("user" + strconv.Itoa(k%1000) + "@example.com")}
		}
		id, err := l.Intend(ctx, entries)
		if err != nil {
			b.Fatal(err)
		}
		if pending = append(pending, id); len(pending) == held {
			confirm()
		}
	}
	confirm()
	wg.Wait()
	b.StopTimer()
	rows := float64(b.N * rowsPerOp)
	b.ReportMetric(float64(processCPU()-cpu0)/float64(time.Microsecond)/rows, "cpu-µs/row")
	if wrote0 >= 0 {
		b.ReportMetric(float64(processWrote()-wrote0)/rows, "written-B/row")
	}
}

// processCPU is the process's user and system CPU time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// processWrote is the bytes the process has passed to write syscalls
// (wchar in /proc/self/io), or -1 where that is not available.
func processWrote() int64 {
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "wchar: "); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err == nil {
				return n
			}
		}
	}
	return -1
}
