package pcstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/pinecone-io/go-pinecone/v5/pinecone"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/connector"
	"github.com/lethe-privacy/lethe/test/pinecone/emulator"
	"github.com/lethe-privacy/lethe/test/pinecone/sdktest"
)

// scanAll scans l and returns its records by id, checking each batch is at
// most a list page.
func scanAll(t *testing.T, l connector.Layer) map[string]connector.Record {
	t.Helper()
	out := map[string]connector.Record{}
	batches := 0
	err := l.(connector.Scanner).Scan(sdktest.Context(t), func(batch []connector.Record) error {
		batches++
		assert.LessOrEqual(t, len(batch), listPage)
		for _, r := range batch {
			_, dup := out[r.Table+"|"+r.ID]
			assert.False(t, dup, "%s listed twice", r.ID)
			out[r.Table+"|"+r.ID] = r
		}
		return nil
	})
	require.NoError(t, err)
	return out
}

// Scan reads every record of a namespace, page after page, with the
// subjects its metadata names by forget's (and capture's) rule.
func TestScan_ListsEveryRecordPageByPageWithItsSubjects(t *testing.T) {
	ti := startIndex(t, emulator.Config{}, false, time.Minute)
	aliceAndBob(t, ti)
	var many []*pinecone.Vector
	for i := range 2*listPage + 7 {
		many = append(many, rec(t, fmt.Sprintf("m%04d", i), []float32{1, 0, 0}, map[string]any{"user_id": fmt.Sprintf("user-%d", i%3)}))
	}
	ti.upsert(t, "docs", many...)
	l := ti.layers(t, Rule{Namespace: "docs", Fields: []string{"user_id", "participants"}})[0]

	got := scanAll(t, l)
	require.Len(t, got, 2*listPage+7+6, "every record of docs, none of other")
	assert.Equal(t, connector.Record{Table: "idx/docs", ID: "a3", Subjects: []string{"bob", "alice"}}, got["idx/docs|a3"])
	assert.Equal(t, []string{"42"}, got["idx/docs|n1"].Subjects, "a number by its JSON text")
	assert.Equal(t, []string{"bob", "carol"}, got["idx/docs|b1"].Subjects)
	assert.Equal(t, []string{"user-2"}, got["idx/docs|m0200"].Subjects, "on the third page")
	assert.Contains(t, l.(connector.Scanner).ScanMethod(), "list_vectors")
}

// A "*" rule scans every namespace without a rule of its own and names
// each record's namespace; records with no subject field come back with
// none.
func TestScan_AnyNamespaceRuleNamesEachNamespace(t *testing.T) {
	ti := startIndex(t, emulator.Config{}, false, time.Minute)
	aliceAndBob(t, ti)
	ti.upsert(t, "", rec(t, "d1", []float32{1, 0, 0}, map[string]any{"text": "no subject"}))
	ls := ti.layers(t, Rule{Namespace: "docs", Fields: []string{"user_id"}}, Rule{Namespace: "*", Fields: []string{"user_id"}})
	got := scanAll(t, ls[1])
	keys := make([]string, 0, len(got))
	for k := range got {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	assert.Equal(t, []string{"idx/__default__|d1", "idx/other|o1"}, keys, "not docs, which has its own rule")
	assert.Empty(t, got["idx/__default__|d1"].Subjects)
	assert.Equal(t, []string{"alice"}, got["idx/other|o1"].Subjects)
}

// Config.Pace is waited for before every list and fetch request of a
// scan, and its error ends the scan: the backstop's rate limit.
func TestScan_WaitsForPaceBeforeEachRequest(t *testing.T) {
	ti := startIndex(t, emulator.Config{}, false, time.Minute)
	var many []*pinecone.Vector
	for i := range 2*listPage + 7 {
		many = append(many, rec(t, fmt.Sprintf("m%04d", i), []float32{1, 0, 0}, map[string]any{"user_id": "u"}))
	}
	ti.upsert(t, "docs", many...)
	waits := 0
	ti.Index.pace = func(context.Context) error { waits++; return nil }
	l := ti.layers(t, Rule{Namespace: "docs", Fields: []string{"user_id"}})[0]
	require.Len(t, scanAll(t, l), 2*listPage+7)
	assert.Equal(t, 6, waits, "three pages: a list and a fetch each")

	stop := errors.New("paced out")
	ti.Index.pace = func(context.Context) error { return stop }
	err := l.(connector.Scanner).Scan(sdktest.Context(t), func([]connector.Record) error { return nil })
	assert.ErrorIs(t, err, stop)
}
