package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestReplay_BadFlagsNameTheFix(t *testing.T) {
	for args, want := range map[string]string{
		"replay --format xml":        "--format \"xml\": give text or json",
		"replay --config x.yaml now": "unexpected argument \"now\"",
	} {
		var stdout, stderr bytes.Buffer
		if code := run(strings.Fields(args), nil, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), want) {
			t.Errorf("%s: exit %d, stderr %q; want 2 and %q", args, code, stderr.String(), want)
		}
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"replay", "--help"}, nil, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "forget.replayed") {
		t.Errorf("replay --help: exit %d, %q", code, stdout.String())
	}
}
