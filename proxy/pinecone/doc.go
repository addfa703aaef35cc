// Package pinecone relays a Pinecone index host's data plane: one listener
// serves the REST API (HTTP/1.1, or HTTP/2) and the gRPC service
// VectorService (HTTP/2: cleartext with prior knowledge, or TLS with ALPN
// h2), as Pinecone index hosts and Pinecone Local do, and forwards every
// request to the configured upstream index host with
// net/http/httputil.ReverseProxy.
//
// The relay owns bytes and connections, nothing else:
//   - the client's headers, Api-Key included, reach the upstream untouched,
//     except what HTTP and httputil.ReverseProxy's Rewrite mode require:
//     Host and SNI are the upstream's, hop-by-hop headers (Connection,
//     Keep-Alive, …; TE: trailers is kept for gRPC) are not forwarded, and
//     X-Forwarded-* and Forwarded are neither forwarded nor added;
//   - paths are forwarded as sent, never cleaned: the Node SDK sends
//     /records/namespaces//upsert for the default namespace;
//   - response bodies stream, and gRPC trailers (grpc-status,
//     grpc-message) pass through unchanged;
//   - a request body is forwarded as it arrives, except a tail held back
//     until the Hook has seen the whole body (gate.go, hold.go): the last
//     byte of a gRPC message, the closing byte of a JSON body's first value. The body is
//     also read whole into memory, up to Config.MaxRequestBytes; a body
//     over it, one too slow, or one the Hook refuses is aborted upstream
//     before its tail, so the upstream never has it whole. A Content-Length
//     over the limit is answered before anything is forwarded; a gRPC body
//     whose first message declares more than the limit is read whole
//     before anything goes upstream, so it is refused at the limit
//     without the upstream seeing it;
//   - a request the Hook has no use for (a read, or any request to an
//     index without rules: Screener), and every request when there is no
//     Hook, is relayed as a plain reverse proxy relays it: its body goes
//     upstream as it arrives, tail included, read into no buffer; only
//     the size limit and the body timeout cut it short;
//   - a request asking for a protocol upgrade (Upgrade, Connection:
//     upgrade, CONNECT) is refused INVALID_ARGUMENT: the data plane has
//     none, and a 101 from the upstream would open a tunnel no Hook sees;
//   - its own errors (upstream unreachable, body too large, unknown host)
//     take Pinecone's shapes: REST {"code", "message", "details"} with the
//     matching HTTP status, gRPC a status code with grpc-message.
//
// Policy plugs in through Hook (see hook.go), the way
// httputil.ReverseProxy takes Rewrite and ModifyResponse; a nil Hook makes
// the relay a plain one.
//
// Routing: with one index every request goes to it. With several, a
// request's Host (port ignored) names its index: the host is the index's
// name or starts with the name and a dot (docs.lethe.internal:5081 reaches
// index "docs"), so each index gets a host name that resolves to the
// proxy. Any other host is answered NOT_FOUND (5) naming the configured
// indexes.
package pinecone
