package coverage

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// An uncovered table is logged once per discovery: not again while it
// stays uncovered, again if it is covered and then uncovered once more.
func TestMonitor_LogsEachUncoveredTableOncePerDiscovery(t *testing.T) {
	var buf bytes.Buffer
	m := NewMonitor(slog.New(slog.NewTextHandler(&buf, nil)), false)
	notes := CheckTables(Policy{}, []Table{table("public.notes", "id text", "embedding vector")})
	count := func() int { return strings.Count(buf.String(), "table=public.notes") }

	m.Observe(notes)
	m.Observe(notes)
	assert.Equal(t, 1, count())
	assert.Equal(t, 1, m.UncoveredTables())
	assert.Contains(t, buf.String(), "coverage=reported")

	m.Observe(nil)
	assert.Equal(t, 0, m.UncoveredTables())
	m.Observe(notes)
	assert.Equal(t, 2, count())
}
