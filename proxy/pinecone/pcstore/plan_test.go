package pcstore

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestPlanFor_StatesTheRequestsAndMethodTheCertificateStates(t *testing.T) {
	rules := []Rule{{Namespace: "", Fields: []string{"user_id"}}, {Namespace: "*", Fields: []string{"owner", "participants"}}}
	ix := &Index{name: "docs", topK: maxTopK, deadline: 45 * time.Second}
	layers, err := ix.Layers(rules)
	assert.NoError(t, err)
	for i, l := range layers {
		plan := PlanFor(rules[i], rules, "", 45*time.Second)
		spec := layerOf(l).search()
		assert.Equal(t, spec.queries(), plan.VerifyQueries, "rule %d", i)
		// The certificate's method is the plan's with the ids counted and
		// the outcome appended.
		run := layerOf(l).method(look{caughtUp: true, stamped: true, searched: 1}, 3, 1, time.Second)
		assert.True(t, strings.HasPrefix(run, spec.verifyMethod("3 ids", 45*time.Second)+": absent at attempt 1"), run)
		assert.Contains(t, plan.VerifyMethod, "fetch of the ledger's ids")
	}
	assert.Equal(t, `namespace "__default__"`, PlanFor(rules[0], rules, "", 0).Scope)
	assert.Equal(t, "every namespace describe_index_stats lists when forget runs, except those with a rule of their own", PlanFor(rules[1], rules, "", 0).Scope)
	assert.Contains(t, PlanFor(rules[1], rules, "", 0).VerifyMethod, "except those with a rule of their own")
	assert.Contains(t, PlanFor(rules[1], rules[1:], "", 0).VerifyMethod, "in each namespace describe_index_stats listed;")
	assert.Contains(t, PlanFor(rules[0], rules, "", 0).VerifyMethod, "for at most 1m0s", "the default verify deadline")
}

func layerOf(l any) *layer {
	switch l := l.(type) {
	case *Layer:
		return l.layer
	case *AnyLayer:
		return l.layer
	}
	return nil
}

// A document index's plan is what its layers state: fetches filtered on
// the subject fields, GET /namespaces for a "*" rule, deletes through the
// documents endpoint.
func TestPlanFor_DocumentIndexStatesTheDocumentsRequests(t *testing.T) {
	rules := []Rule{{Namespace: "notes", Fields: []string{"user_id"}}, {Namespace: "*", Fields: []string{"owner"}}}
	ix := &Index{name: "docs", topK: maxTopK, docPage: documentPage, deadline: 45 * time.Second, docs: &documentsAPI{}}
	layers, err := ix.Layers(rules)
	assert.NoError(t, err)
	for i, l := range layers {
		plan := PlanFor(rules[i], rules, APIDocuments, 45*time.Second)
		spec := layerOf(l).search()
		assert.Equal(t, spec.queries(), plan.VerifyQueries, "rule %d", i)
		run := layerOf(l).method(look{caughtUp: true, stamped: true, searched: 1}, 3, 1, time.Second)
		assert.True(t, strings.HasPrefix(run, spec.verifyMethod("3 ids", 45*time.Second)+": absent at attempt 1"), run)
		assert.Contains(t, plan.Method, "/namespaces/{namespace}/documents/delete")
		assert.Contains(t, plan.VerifyMethod, "documents fetch of the ledger's ids")
		for _, q := range plan.VerifyQueries {
			assert.NotContains(t, q, "query namespace=", "no probe-vector query on a document index")
		}
	}
	assert.Equal(t, "every namespace GET /namespaces lists when forget runs, except those with a rule of their own", PlanFor(rules[1], rules, APIDocuments, 0).Scope)
	assert.Equal(t, "GET /namespaces (the namespaces, each searched as below)", PlanFor(rules[1], rules, APIDocuments, 0).VerifyQueries[0])
}
