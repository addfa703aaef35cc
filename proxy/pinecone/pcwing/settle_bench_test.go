package pcwing

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/lethe-privacy/lethe/ledger"
	"github.com/lethe-privacy/lethe/test/pinecone/emulator"
)

// BenchmarkSettle_10000Records times one settle after a delete by filter
// over REST, from the delete's answer to the settle's end, in a namespace
// whose 10,000 records (half alice's, whom the delete removes) the ledger
// holds; reads are paced at scan_rate 1000/s. It reports the index
// requests the settle sent beside the time.
//
//	go test -run '^$' -bench BenchmarkSettle -benchtime 3x ./proxy/pinecone/pcwing/
func BenchmarkSettle_10000Records(b *testing.B) {
	const n = 10000
	var requests int
	for range b.N {
		b.StopTimer()
		r := newSettleRig(b, "vectors", emulator.Config{})
		seedAround(b, r, n)
		before := r.reads.count()
		b.StartTimer()
		r.deleteByFilter(b, "notes", "alice", false)
		for r.metric("lethe_pinecone_filter_delete_settles_total") < 1 {
			time.Sleep(time.Millisecond)
		}
		b.StopTimer()
		if got := r.metric("lethe_pinecone_filter_delete_records_marked_deleted_total"); got != n/2 {
			b.Fatalf("%g records marked deleted; want %d", got, n/2)
		}
		requests += r.reads.count() - before - 1 // the delete itself
	}
	b.ReportMetric(float64(requests)/float64(b.N), "index-requests/settle")
}

// seedAround writes n records to namespace notes straight to the index,
// every other one alice's, and records them in the ledger as confirmed.
func seedAround(b *testing.B, r *settleRig, n int) {
	ctx := context.Background()
	var entries []ledger.Entry
	for start := 0; start < n; start += 1000 {
		var vs []string
		for i := start; i < min(start+1000, n); i++ {
			subject := "bob"
			if i%2 == 0 {
				subject = "alice"
			}
			id := fmt.Sprintf("r%05d", i)
			vs = append(vs, `{"id":"`+id+`","values":[0.1,0.2],"metadata":{"user_id":"`+subject+`"}}`)
			entries = append(entries, ledger.Entry{Store: ledger.StorePinecone, Table: "docs/notes", RecordID: id, Subject: r.hasher.Hash(subject)})
		}
		req, err := http.NewRequest(http.MethodPost, r.upstream+"/vectors/upsert", strings.NewReader(`{"namespace":"notes","vectors":[`+strings.Join(vs, ",")+`]}`))
		if err != nil {
			b.Fatal(err)
		}
		req.Header.Set("Api-Key", settleKey)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("seeding the index: %s", resp.Status)
		}
	}
	id, err := r.ledger.Intend(ctx, entries)
	if err != nil {
		b.Fatal(err)
	}
	if err := r.ledger.Confirm(ctx, id); err != nil {
		b.Fatal(err)
	}
}
