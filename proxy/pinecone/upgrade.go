package pinecone

import (
	"net/http"
	"strings"
)

// isUpgrade reports whether r asks to leave HTTP: an Upgrade header (h2c,
// websocket, anything), a Connection header naming upgrade, or CONNECT (a
// tunnel, or RFC 8441's extended CONNECT over HTTP/2). httputil.ReverseProxy
// would relay such a request with its upgrade headers, and an upstream
// answering 101 would turn the connection into a tunnel whose bytes no Hook
// sees. Pinecone's data plane has no upgrade, so the relay refuses them; h2c
// with prior knowledge is HTTP/2 from the first byte and no upgrade.
func isUpgrade(r *http.Request) bool {
	if r.Method == http.MethodConnect || len(r.Header.Values("Upgrade")) > 0 {
		return true
	}
	for _, v := range r.Header.Values("Connection") {
		for _, token := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(token), "upgrade") {
				return true
			}
		}
	}
	return false
}

// upgradeRefused is the answer to an upgrade (isUpgrade).
var upgradeRefused = &Status{Code: CodeInvalidArgument, Message: "lethe-proxy: the request asks for a protocol upgrade " +
	"(Upgrade, Connection: upgrade or CONNECT), which Pinecone's data plane does not have, so it was not forwarded; " +
	"send it as plain HTTP/1.1 or HTTP/2 (gRPC over cleartext: HTTP/2 with prior knowledge, not Upgrade: h2c)"}
