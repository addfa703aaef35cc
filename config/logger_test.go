package config

import (
	"bytes"
	"strings"
	"testing"
)

// The logger keeps to log.level and writes log.format.
func TestLog_NewLoggerByLevelAndFormat(t *testing.T) {
	var out bytes.Buffer
	log := Log{Level: "warn", Format: "json"}.NewLogger(&out)
	log.Info("dropped")
	log.Warn("kept")
	if got := out.String(); strings.Contains(got, "dropped") || !strings.HasPrefix(got, `{"time":`) || !strings.Contains(got, `"msg":"kept"`) {
		t.Fatalf("level warn, format json: %q", got)
	}
	out.Reset()
	Log{Level: "info", Format: "text"}.NewLogger(&out).Info("kept")
	if got := out.String(); !strings.HasPrefix(got, "time=") || !strings.Contains(got, "msg=kept") {
		t.Fatalf("level info, format text: %q", got)
	}
}
