package connector

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/lethe-privacy/lethe/capture/coverage"
)

// coverageWing answers Coverage with a set report or error.
type coverageWing struct {
	Wing
	name   string
	report coverage.Report
	err    error
}

func (c coverageWing) Name() string { return c.name }
func (c coverageWing) Coverage(context.Context, coverage.Policy) (coverage.Report, error) {
	return c.report, c.err
}

// A wing that cannot be read is named, with its error, and the others'
// counts and findings are still merged.
func TestWingsCoverage_MergesTheReadableAndNamesTheUnreadable(t *testing.T) {
	pgFinding := coverage.Finding{Table: "public.docs"}
	pcFinding := coverage.Finding{Table: "docs/notes"}
	ws := Wings{
		coverageWing{name: "postgres", report: coverage.Report{TablesChecked: 3, Findings: []coverage.Finding{pgFinding}}},
		coverageWing{name: "broken", err: errors.New("connection refused")},
		coverageWing{name: "pinecone", report: coverage.Report{NamespacesChecked: 2, Findings: []coverage.Finding{pcFinding}}},
	}
	report, failed := ws.Coverage(context.Background(), coverage.Policy{})
	want := coverage.Report{TablesChecked: 3, NamespacesChecked: 2, Findings: []coverage.Finding{pgFinding, pcFinding}, Unchecked: []string{"broken"}}
	if !reflect.DeepEqual(report, want) {
		t.Fatalf("report %+v, want %+v", report, want)
	}
	if len(failed) != 1 || failed[0].Error() != "broken: connection refused" {
		t.Fatalf("failed %v, want the broken wing's error with its name", failed)
	}
}
