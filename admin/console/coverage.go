package console

import (
	"net/http"

	"github.com/lethe-privacy/lethe/capture/coverage"
)

// coverageView is the coverage page: every store's survey, with each
// store's uncovered tables and namespaces set apart from its other
// findings.
type coverageView struct {
	coverage.Survey
	Stores []storeView
}

// storeView is one store on the coverage page.
type storeView struct {
	coverage.StoreSurvey
	Uncovered []coverage.Finding // uncovered_table, uncovered_namespace
	Other     []coverage.Finding // rules that do not match the store
}

// coveragePage shows what has a capture rule, what is ignored and why,
// and what has neither, as GET /v1/coverage answers it. The checks read
// the stores' catalogs and index stats, never a row.
func (c *console) coveragePage(w http.ResponseWriter, r *http.Request) {
	who := callerOf(r.Context())
	if c.cfg.Coverage == nil {
		c.renderError(w, r, who, http.StatusNotFound, "Coverage is not available on this listener.")
		return
	}
	s := c.cfg.Coverage(r.Context())
	v := coverageView{Survey: s}
	for _, st := range s.Stores {
		sv := storeView{StoreSurvey: st}
		for _, f := range st.Findings {
			if f.Code == coverage.CodeUncoveredTable || f.Code == coverage.CodeUncoveredNamespace {
				sv.Uncovered = append(sv.Uncovered, f)
			} else {
				sv.Other = append(sv.Other, f)
			}
		}
		v.Stores = append(v.Stores, sv)
	}
	c.render(w, r, http.StatusOK, "coverage", who, "Coverage", v)
}
