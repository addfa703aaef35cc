package pinecone_test

import (
	"bufio"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/proxy/pinecone"
)

// A request asking for a protocol upgrade (Upgrade: h2c or websocket,
// Connection: upgrade, CONNECT) is refused 400 / INVALID_ARGUMENT and never
// reaches an upstream that would answer 101 and open a tunnel no hook
// sees; the connection then serves plain requests.
func TestRelay_ProtocolUpgradesAreRefused(t *testing.T) {
	var reached atomic.Int32
	upstream := serveHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		if r.Header.Get("Upgrade") != "" {
			w.Header().Set("Connection", "Upgrade")
			w.Header().Set("Upgrade", r.Header.Get("Upgrade"))
			w.WriteHeader(http.StatusSwitchingProtocols)
			return
		}
		w.WriteHeader(http.StatusOK)
	}), nil)
	relay := startRelay(t, pinecone.Config{Indexes: []*pinecone.Index{index(t, "docs", upstream, nil)}}, nil)
	addr := strings.TrimPrefix(relay, "http://")

	body := `{"vectors":[{"id":"a1","values":[1],"metadata":{"user_id":"alice"}}]}`
	for name, head := range map[string]string{
		"h2c":              "POST /vectors/upsert HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n",
		"websocket":        "GET /vectors/upsert HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n",
		"upgrade alone":    "POST /vectors/upsert HTTP/1.1\r\nHost: x\r\nUpgrade: foo\r\n",
		"connection alone": "POST /query HTTP/1.1\r\nHost: x\r\nConnection: keep-alive, upgrade\r\n",
		"connect":          "CONNECT evil.example:443 HTTP/1.1\r\nHost: evil.example:443\r\n",
	} {
		conn, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		br := bufio.NewReader(conn)
		_, err = conn.Write([]byte(head + "Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body))
		require.NoError(t, err)
		resp, err := http.ReadResponse(br, nil)
		require.NoError(t, err, name)
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode, name)
		msg := make([]byte, 4096)
		n, _ := resp.Body.Read(msg)
		resp.Body.Close()
		assert.Contains(t, string(msg[:n]), "protocol upgrade", name)
		assert.Contains(t, string(msg[:n]), `"code":3`, name)
		if name == "h2c" {
			// The connection stays usable for plain requests.
			_, err = conn.Write([]byte("POST /query HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}"))
			require.NoError(t, err)
			resp, err = http.ReadResponse(br, nil)
			require.NoError(t, err)
			resp.Body.Close()
			assert.Equal(t, http.StatusOK, resp.StatusCode)
		}
		conn.Close()
	}
	assert.Equal(t, int32(1), reached.Load(), "only the plain request reached the upstream")
}
