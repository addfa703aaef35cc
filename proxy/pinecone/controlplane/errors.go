package controlplane

import (
	"encoding/json"
	"net/http"
)

// writeError answers with the control plane's error body,
// {"error": {"code": "…", "message": "…"}, "status": <http status>}, which
// the SDKs read into their own error types.
func writeError(w http.ResponseWriter, status int, code, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": code, "message": message}, "status": status})
}
