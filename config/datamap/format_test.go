package datamap

import (
	"strings"
	"testing"
)

// lethe-proxy export's format: the committed copy's extension when
// checking, else --format, markdown by default; anything else names the
// flag and the fix.
func TestChosenFormat_FromTheCheckedFileOrTheFlag(t *testing.T) {
	for _, tc := range []struct {
		given, check string
		want         Format
		wantErr      string
	}{
		{"", "", FormatMarkdown, ""},
		{"json", "", FormatJSON, ""},
		{"markdown", "", FormatMarkdown, ""},
		{"", "docs/data-map.md", FormatMarkdown, ""},
		{"", "map.JSON", FormatJSON, ""},
		{"yaml", "", "", `--format "yaml" is not markdown or json`},
		{"", "map.txt", "", "--check map.txt: cannot tell the format from the extension (name the file .md or .json)"},
	} {
		got, err := ChosenFormat(tc.given, tc.check)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ChosenFormat(%q, %q): error %v, want %q", tc.given, tc.check, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ChosenFormat(%q, %q) = %q, %v; want %q", tc.given, tc.check, got, err, tc.want)
		}
	}
}
