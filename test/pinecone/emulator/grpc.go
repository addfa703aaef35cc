package emulator

import (
	"encoding/binary"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// grpcOperations are the methods of the gRPC service VectorService, which
// Pinecone declares without a proto package: paths are /VectorService/<name>.
var grpcOperations = map[string]operation{
	"Upsert":             op(upsertFromProto, nil, (*Server).upsert),
	"Update":             op(updateFromProto, nil, (*Server).update),
	"Delete":             op(deleteFromProto, nil, (*Server).delete),
	"Fetch":              op(fetchFromProto, nil, (*Server).fetch),
	"List":               op(listFromProto, nil, (*Server).list),
	"Query":              op(queryFromProto, nil, (*Server).query),
	"DescribeIndexStats": op(statsFromProto, nil, (*Server).describeIndexStats),
	"ListNamespaces":     op(listNamespacesFromProto, nil, (*Server).listNamespaces),
	"DescribeNamespace":  op(namespaceFromProto, nil, (*Server).describeNamespace),
	"DeleteNamespace":    op(namespaceFromProto, nil, (*Server).deleteNamespace),
}

// serveGRPC answers one unary gRPC call carried by net/http's HTTP/2
// server: a request of one length-prefixed message, a response of headers,
// one message and the grpc-status/grpc-message trailers
// (https://github.com/grpc/grpc/blob/master/doc/PROTOCOL-HTTP2.md).
// Serving it by hand keeps REST and gRPC on one net/http listener without
// google.golang.org/grpc's experimental ServeHTTP bridge.
func (s *Server) serveGRPC(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/grpc")
	name, _ := strings.CutPrefix(r.URL.Path, "/VectorService/")
	opn, ok := grpcOperations[name]
	if r.Method != http.MethodPost || !ok || opn.fromProto == nil {
		s.grpcError(w, name, errorf(Unimplemented, "unknown method %s %s: the emulator serves /VectorService/{%s}", r.Method, r.URL.Path, "Upsert,Update,Delete,Fetch,List,Query,DescribeIndexStats,ListNamespaces,DescribeNamespace,DeleteNamespace"))
		return
	}
	if !s.authorized(r.Header) {
		s.grpcError(w, name, errorf(Unauthenticated, "Invalid API key: send the index's key as api-key metadata"))
		return
	}
	msg, err := s.readGRPCMessage(r.Body)
	if err != nil {
		s.grpcError(w, name, err)
		return
	}
	req, err := opn.fromProto(msg)
	if err != nil {
		s.grpcError(w, name, err)
		return
	}
	resp, err := opn.run(s, req)
	if err != nil {
		s.grpcError(w, name, err)
		return
	}
	stamp := resp.stamp()
	w.Header().Set(stamp.header, strconv.FormatUint(stamp.value, 10))
	w.WriteHeader(http.StatusOK)
	body := resp.proto()
	frame := make([]byte, 5, 5+len(body))
	binary.BigEndian.PutUint32(frame[1:], uint32(len(body)))
	if _, err := w.Write(append(frame, body...)); err != nil {
		return
	}
	w.Header().Set(http.TrailerPrefix+"Grpc-Status", "0")
}

// readGRPCMessage reads the request's single length-prefixed message.
func (s *Server) readGRPCMessage(body io.Reader) ([]byte, error) {
	var prefix [5]byte
	if _, err := io.ReadFull(body, prefix[:]); err != nil {
		return nil, errorf(InvalidArgument, "gRPC request has no complete message: %v", err)
	}
	if prefix[0] != 0 {
		return nil, errorf(Unimplemented, "compressed gRPC messages are not supported: send them uncompressed")
	}
	size := binary.BigEndian.Uint32(prefix[1:])
	if int64(size) > s.cfg.MaxRequestBytes {
		return nil, tooLarge(s.cfg.MaxRequestBytes)
	}
	msg := make([]byte, size)
	if _, err := io.ReadFull(body, msg); err != nil {
		return nil, errorf(InvalidArgument, "gRPC message is shorter than its %d-byte length prefix: %v", size, err)
	}
	return msg, nil
}

// grpcError ends the call with err's status in a trailers-only response.
func (s *Server) grpcError(w http.ResponseWriter, method string, err error) {
	var e *Error
	if !errors.As(err, &e) {
		e = errorf(Internal, "%v", err)
	}
	s.cfg.Logger.Info("pinecone emulator refused a request", "protocol", "grpc", "operation", method, "code", int(e.Code))
	w.Header().Set("Grpc-Status", strconv.Itoa(int(e.Code)))
	w.Header().Set("Grpc-Message", percentEncode(e.Message))
	w.WriteHeader(http.StatusOK)
}

// percentEncode escapes a grpc-message value as the gRPC spec requires:
// bytes outside printable ASCII, and '%', become %XX.
func percentEncode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c <= 0x7e && c != '%' {
			b.WriteByte(c)
			continue
		}
		b.WriteString("%" + strings.ToUpper(strconv.FormatUint(uint64(c)|0x100, 16)[1:]))
	}
	return b.String()
}
