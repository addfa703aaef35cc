package mcpserver

import (
	"bytes"
	"strings"
	"time"

	"github.com/lethe-privacy/lethe/certificate"
	"github.com/lethe-privacy/lethe/certificate/offline"
)

// verifyOffline checks a certificate or signed report against the pinned
// keys here, not on the server: the verdict and text of `lethe-proxy
// verify`.
func verifyOffline(data []byte, keys certificate.KeySet, now time.Time) VerifyResult {
	var out bytes.Buffer
	valid := offline.Verify(data, keys, certificate.ReportPolicy{Now: now}, &out)
	first, _, _ := strings.Cut(out.String(), "\n")
	return VerifyResult{Valid: valid, Verdict: strings.TrimPrefix(first, "verdict: "), Report: out.String()}
}
