package redact

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSubject_BlanksEverySpelling(t *testing.T) {
	for _, subject := range []string{`o"brïen@example.com`, `o'brien`, "tab\there", `back\slash`, "plain@example.com", "日本"} {
		js, _ := json.Marshal(subject)
		for name, msg := range map[string]string{
			"raw":          "no rows for " + subject,
			"%q":           fmt.Sprintf("no rows for %q", subject),
			"%+q":          fmt.Sprintf("no rows for %+q", subject),
			"json":         `{"error":"no rows for ` + string(js[1:len(js)-1]) + `"}`,
			"sql literal":  "WHERE user_id = '" + strings.ReplaceAll(subject, "'", "''") + "'",
			"json of json": fmt.Sprintf("%q", `{"s":`+string(js)+`}`),
		} {
			got := Subject(msg, subject)
			assert.Contains(t, got, Placeholder, "%s: %s", name, got)
			for _, part := range []string{"brïen", "obrien", "brien", "slash", "here", "plain@", "日本"} {
				if strings.Contains(subject, part) {
					assert.NotContains(t, got, part, "%s: %s", name, got)
				}
			}
		}
	}
}

func TestSubject_EmptySubjectLeavesTheMessage(t *testing.T) {
	assert.Equal(t, "x", Subject("x", ""))
}

func TestSpellings_AreDistinctAndLongestFirst(t *testing.T) {
	got := spellings(`o"b`)
	for i := 1; i < len(got); i++ {
		assert.NotEqual(t, got[i-1], got[i])
		assert.GreaterOrEqual(t, len(got[i-1]), len(got[i]))
	}
}
