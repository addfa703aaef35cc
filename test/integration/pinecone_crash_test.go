//go:build integration

package integration

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	gopinecone "github.com/pinecone-io/go-pinecone/v5/pinecone"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/lethe-privacy/lethe/config"
	"github.com/lethe-privacy/lethe/ledger"
	"github.com/lethe-privacy/lethe/test/pinecone/emulator"
)

// TestPinecone_KillNineMidUpsertLosesNoRecord kills the proxy with SIGKILL
// again and again while go-pinecone (gRPC) and REST clients upsert through
// it, and checks the invariant: every record the index holds is in the
// ledger under its subject, and no confirmed record is missing from the
// index.
func TestPinecone_KillNineMidUpsertLosesNoRecord(t *testing.T) {
	bin := buildProxy(t)
	_, upstream := startEmulator(t, emulator.Config{APIKey: "crash-key"})
	dir := t.TempDir()
	pcAddr := freePort(t)
	cfg := filepath.Join(dir, "lethe.yaml")
	// A proxy for Pinecone alone: no postgres section.
	require.NoError(t, os.WriteFile(cfg, []byte(fmt.Sprintf(`pinecone:
  listen: %s
  indexes:
    - name: docs
      host: %s
      namespaces: [{namespace: "*", subjects: [user_id]}]
capture:
  ledger:
    sqlite: ledger.db
log:
  level: info
`, pcAddr, upstream)), 0o600))

	const rounds, writers = 4, 4
	var seq int64
	var mu sync.Mutex
	nextID := func(round, w int) (string, string) {
		mu.Lock()
		defer mu.Unlock()
		seq++
		return fmt.Sprintf("r%d-w%d-%d", round, w, seq), fmt.Sprintf("user%d", seq%3)
	}
	written := func() int64 { mu.Lock(); defer mu.Unlock(); return seq }
	for round := range rounds {
		proc := startProxyBinary(t, bin, cfg, pcAddr)
		var wg sync.WaitGroup
		stop := make(chan struct{})
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				upsert := restUpserter(t, "http://"+pcAddr)
				if w%2 == 0 {
					upsert = grpcUpserter(t, "http://"+pcAddr)
				}
				for {
					select {
					case <-stop:
						return
					default:
					}
					var ids, subjects []string
					for range 3 {
						id, subject := nextID(round, w)
						ids, subjects = append(ids, id), append(subjects, subject)
					}
					if upsert(ids, subjects) != nil {
						return // the proxy died under us
					}
				}
			}()
		}
		start := written()
		time.Sleep(time.Duration(200+100*round) * time.Millisecond)
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && written()-start < 30; {
			time.Sleep(20 * time.Millisecond)
		}
		require.NoError(t, proc.Process.Signal(syscall.SIGKILL))
		proc.Wait()
		close(stop)
		wg.Wait()
	}
	pending, pendingStored := pineconeCrashInvariants(t, dir, upstream)
	require.Greater(t, pending, 0, "kill -9 left intents pending (else the crash is not exercised)")
	t.Logf("before the restart: %d pending records, %d of them in the index", pending, pendingStored)

	// The restart's recovery, which runs before the proxy binds, fetches
	// the pending records: those the index holds are confirmed; absent
	// ones are dropped only past pinecone.verify_deadline (a write may
	// become visible late), so some may stay pending.
	t.Setenv(config.DefaultPineconeAPIKeyEnv, "crash-key") // recovery fetches from the index host
	proc := startProxyBinary(t, bin, cfg, pcAddr)
	require.NoError(t, proc.Process.Signal(syscall.SIGTERM))
	require.NoError(t, proc.Wait())
	after, afterStored := pineconeCrashInvariants(t, dir, upstream)
	assert.Zero(t, afterStored, "a pending record the index holds is confirmed by recovery at restart")
	assert.LessOrEqual(t, after, pending)
}

// pineconeCrashInvariants lists every record of the index's namespace and
// checks it against the ledger in dir; it returns how many records are
// tracked by pending intents only, and how many of those the index holds.
func pineconeCrashInvariants(t *testing.T, dir, upstream string) (pending, pendingStored int) {
	t.Helper()
	l, err := ledger.OpenSQLite(filepath.Join(dir, "ledger.db"), ledger.Options{})
	require.NoError(t, err)
	defer l.Close()
	h, err := ledger.NewHasher(testSalt)
	require.NoError(t, err)

	stored := map[string]string{} // id → subject, from the index itself
	pc, err := gopinecone.NewClient(gopinecone.NewClientParams{ApiKey: "crash-key"})
	require.NoError(t, err)
	idx, err := pc.Index(gopinecone.NewIndexConnParams{Host: upstream, Namespace: "crash"})
	require.NoError(t, err)
	defer idx.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var token *string
	for {
		limit := uint32(100)
		page, err := idx.ListVectors(ctx, &gopinecone.ListVectorsRequest{Limit: &limit, PaginationToken: token})
		require.NoError(t, err)
		var ids []string
		for _, v := range page.VectorIds {
			ids = append(ids, *v)
		}
		if len(ids) > 0 {
			got, err := idx.FetchVectors(ctx, ids)
			require.NoError(t, err)
			for id, v := range got.Vectors {
				stored[id] = v.Metadata.Fields["user_id"].GetStringValue()
			}
		}
		if page.NextPaginationToken == nil {
			break
		}
		token = page.NextPaginationToken
	}
	require.Greater(t, len(stored), 50, "the load wrote records")

	best := map[string]ledger.State{} // "subject/id" → best state
	for i := range 3 {
		subject := fmt.Sprintf("user%d", i)
		recs, err := l.BySubject(context.Background(), h.Hash(subject))
		require.NoError(t, err)
		for _, r := range recs {
			if r.Store == ledger.StorePinecone && r.Table == "docs/crash" && best[subject+"/"+r.RecordID] != ledger.StateConfirmed {
				best[subject+"/"+r.RecordID] = r.State
			}
		}
	}
	var untracked, ghosts int
	for id, subject := range stored {
		if _, ok := best[subject+"/"+id]; !ok {
			untracked++
		}
	}
	for key, st := range best {
		id := key[strings.Index(key, "/")+1:]
		if st == ledger.StatePending {
			pending++
			if _, ok := stored[id]; ok {
				pendingStored++
			}
		}
		if _, ok := stored[id]; !ok && st == ledger.StateConfirmed {
			ghosts++
		}
	}
	t.Logf("%d records stored, %d in the ledger (%d pending)", len(stored), len(best), pending)
	assert.Zero(t, untracked, "records in the index with no ledger entry for their subject")
	assert.Zero(t, ghosts, "confirmed ledger entries for records the index never got")
	return pending, pendingStored
}

// grpcUpserter upserts through go-pinecone (gRPC) into namespace crash.
func grpcUpserter(t *testing.T, host string) func(ids, subjects []string) error {
	pc, err := gopinecone.NewClient(gopinecone.NewClientParams{ApiKey: "crash-key"})
	require.NoError(t, err)
	idx, err := pc.Index(gopinecone.NewIndexConnParams{Host: host, Namespace: "crash"})
	require.NoError(t, err)
	t.Cleanup(func() { idx.Close() })
	return func(ids, subjects []string) error {
		var vs []*gopinecone.Vector
		for i, id := range ids {
			md, err := structpb.NewStruct(map[string]any{"user_id": subjects[i]})
			require.NoError(t, err)
			values := []float32{float32(i) + 1, 0.5}
			vs = append(vs, &gopinecone.Vector{Id: id, Values: &values, Metadata: md})
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err := idx.UpsertVectors(ctx, vs)
		return err
	}
}

// restUpserter upserts over REST into namespace crash.
func restUpserter(t *testing.T, host string) func(ids, subjects []string) error {
	client := &http.Client{Timeout: 5 * time.Second}
	return func(ids, subjects []string) error {
		var b strings.Builder
		b.WriteString(`{"namespace":"crash","vectors":[`)
		for i, id := range ids {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"id":%q,"values":[%d,0.5],"metadata":{"user_id":%q}}`, id, i+1, subjects[i])
		}
		b.WriteString(`]}`)
		req, err := http.NewRequest(http.MethodPost, host+"/vectors/upsert", strings.NewReader(b.String()))
		require.NoError(t, err)
		req.Header.Set("Api-Key", "crash-key")
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("status %d", resp.StatusCode)
		}
		return nil
	}
}
