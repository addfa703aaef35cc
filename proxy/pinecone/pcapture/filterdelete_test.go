package pcapture_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pinecone-io/go-pinecone/v5/pinecone"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/lethe-privacy/lethe/proxy/pinecone/pcapture"
	"github.com/lethe-privacy/lethe/test/pinecone/emulator"
	"github.com/lethe-privacy/lethe/test/pinecone/sdktest"
)

// filterDeletes collects what a Hook reports through OnFilterDelete.
type filterDeletes struct {
	mu   sync.Mutex
	seen []pcapture.FilterDelete
}

func (f *filterDeletes) add(d pcapture.FilterDelete) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seen = append(f.seen, d)
}

func (f *filterDeletes) all() []pcapture.FilterDelete {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]pcapture.FilterDelete(nil), f.seen...)
}

// A delete by filter that the store applied is reported once, with its
// namespace, the moment dividing earlier writes' confirmations from later
// ones (Since), and the answer's request
// LSN, over vectors REST, gRPC and documents; the ledger itself is left
// to the wing. One the store refused is not reported.
func TestFilterDelete_ReportedOnceAppliedWithItsLSN(t *testing.T) {
	for _, c := range []struct {
		name      string
		namespace string
		send      func(t *testing.T, r *rig) int
	}{
		{"vectors REST", "notes", func(t *testing.T, r *rig) int {
			return post(t, http.DefaultClient, r.url, "/vectors/delete", `{"filter":{"user_id":{"$eq":"bob"}},"namespace":"notes"}`).status
		}},
		{"gRPC", "notes", func(t *testing.T, r *rig) int {
			filter, err := structpb.NewStruct(map[string]any{"user_id": map[string]any{"$eq": "bob"}})
			require.NoError(t, err)
			require.NoError(t, sdktest.GoIndex(t, r.url, apiKey, "notes", nil).DeleteVectorsByFilter(sdktest.Context(t), (*pinecone.MetadataFilter)(filter)))
			return http.StatusOK
		}},
		{"documents", "notes", func(t *testing.T, r *rig) int {
			status, msg := postDocuments(t, http.DefaultClient, r.url, "/namespaces/notes/documents/delete", `{"filter":{"user_id":{"$eq":"bob"}}}`)
			require.Less(t, status, 300, msg)
			return status
		}},
		{"default namespace", "__default__", func(t *testing.T, r *rig) int {
			return post(t, http.DefaultClient, r.url, "/vectors/delete", `{"filter":{"user_id":{"$eq":"bob"}}}`).status
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, rigOptions{})
			seen := &filterDeletes{}
			r.hook.OnFilterDelete(seen.add)
			upsertNotesAndTeam(t, r)
			before := time.Now()
			require.Equal(t, http.StatusOK, c.send(t, r))
			require.Eventually(t, func() bool { return len(seen.all()) > 0 }, 30*time.Second, time.Millisecond)
			got := seen.all()
			require.Len(t, got, 1)
			d := got[0]
			assert.Equal(t, "docs", d.Index)
			assert.Equal(t, c.namespace, d.Namespace)
			assert.Equal(t, "docs/"+c.namespace, d.Table)
			assert.True(t, d.HasLSN, "the emulator stamps writes with x-pinecone-request-lsn")
			assert.NotZero(t, d.RequestLSN)
			assert.False(t, d.Since.Before(before))
			assert.False(t, d.Answered.Before(d.Since))
			r.eventually(t, "bob", "docs/notes/b1 confirmed") // the hook alone leaves the ledger to the wing
		})
	}

	t.Run("refused by the store", func(t *testing.T) {
		r := newRig(t, rigOptions{})
		seen := &filterDeletes{}
		r.hook.OnFilterDelete(seen.add)
		req, err := http.NewRequest(http.MethodPost, r.url+"/vectors/delete", strings.NewReader(`{"filter":{"user_id":{"$eq":"bob"}},"namespace":"notes"}`))
		require.NoError(t, err)
		req.Header.Set("Api-Key", "not-the-key")
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
		// A later one the store applies is reported, and only it.
		require.Equal(t, http.StatusOK, post(t, http.DefaultClient, r.url, "/vectors/delete", `{"filter":{"user_id":{"$eq":"bob"}},"namespace":"team"}`).status)
		require.Eventually(t, func() bool { return len(seen.all()) > 0 }, 30*time.Second, time.Millisecond)
		got := seen.all()
		require.Len(t, got, 1)
		assert.Equal(t, "team", got[0].Namespace)
	})
}

// A delete whose answer does not say whether it was applied (here the
// index host applies it and answers 503) is reported too, without an
// LSN: by filter, and deleteAll, whose records the ledger cannot mark
// deleted unread. Only a read of the store then tells what went.
func TestFilterDelete_OutcomeUnknownIsReportedForARead(t *testing.T) {
	em := emulator.New(emulator.Config{APIKey: apiKey, IndexName: "docs"}).Handler()
	upstream := serve(t, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path == "/vectors/delete" {
			em.ServeHTTP(httptest.NewRecorder(), req)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte(`{"code":14,"message":"upstream connect error"}`))
			return
		}
		em.ServeHTTP(w, req)
	}))
	r := newRig(t, rigOptions{upstream: upstream})
	seen := &filterDeletes{}
	r.hook.OnFilterDelete(seen.add)
	upsertNotesAndTeam(t, r)
	require.Equal(t, http.StatusServiceUnavailable, post(t, http.DefaultClient, r.url, "/vectors/delete", `{"filter":{"user_id":{"$eq":"bob"}},"namespace":"notes"}`).status)
	require.Equal(t, http.StatusServiceUnavailable, post(t, http.DefaultClient, r.url, "/vectors/delete", `{"deleteAll":true,"namespace":"team"}`).status)
	require.Eventually(t, func() bool { return len(seen.all()) == 2 }, 30*time.Second, time.Millisecond)
	got := seen.all()
	assert.Equal(t, []string{"docs/notes", "docs/team"}, []string{got[0].Table, got[1].Table})
	for _, d := range got {
		assert.False(t, d.HasLSN, "a 503 carries no request LSN")
		assert.False(t, d.Since.IsZero())
	}
	r.eventually(t, "alice", "docs/notes/a1 confirmed", "docs/team/t1 confirmed") // unanswered deletes leave the records present until read
}
