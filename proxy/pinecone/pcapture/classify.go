package pcapture

import (
	"encoding/binary"
	"errors"
	"net/http"
	"path"
	"strings"

	"github.com/lethe-privacy/lethe/extract"
	"github.com/lethe-privacy/lethe/proxy/pinecone"
	"github.com/lethe-privacy/lethe/proxy/pinecone/pcextract"
)

// op is the kind of write a request is.
type op uint8

const (
	opNone            op = iota // a known read, or a request that adds no personal data
	opUpsert                    // REST or gRPC upsert
	opUpdate                    // REST or gRPC update
	opDelete                    // REST or gRPC delete
	opRecords                   // REST records upsert (NDJSON)
	opBulkImport                // REST bulk import
	opDocumentsUpsert           // REST documents upsert (API 2026-07)
	opDocumentsUpdate           // REST documents update (API 2026-07)
	opDocumentsDelete           // REST documents delete (API 2026-07)
	opNamespaceDelete           // REST DELETE /namespaces/{namespace} or gRPC DeleteNamespace: every record of it deleted
	opNonCanonical              // a write path spelled differently, or a path starting with "//"
	opUnknown                   // neither a known read nor a write Lethe reads
)

// write is a request classified: what it writes and how to read it.
type write struct {
	op        op
	name      string // for messages and logs: "upsert", …
	grpc      bool
	namespace string // opRecords, the documents writes and REST opNamespaceDelete: from the path
	pattern   string // opUnknown: the path with its values hidden (pathPattern)
	version   string // opUnknown: the API version, as shownVersion shows it
}

// The REST write paths, exactly as Pinecone's API documents them.
const (
	pathUpsert        = "/vectors/upsert"
	pathUpdate        = "/vectors/update"
	pathDelete        = "/vectors/delete"
	pathBulkImports   = "/bulk/imports"
	pathRecordsPrefix = "/records/namespaces/"
	pathRecordsSuffix = "/upsert"
	pathNamespaces    = "/namespaces/"
)

// The API version 2026-07's documents write paths, after
// /namespaces/{namespace}; each is a write whatever the method.
var documentsWrites = map[string]op{
	"/documents/upsert": opDocumentsUpsert,
	"/documents/update": opDocumentsUpdate,
	"/documents/delete": opDocumentsDelete,
}

// The gRPC write methods (the service has no proto package).
const (
	grpcUpsert = "/VectorService/Upsert"
	grpcUpdate = "/VectorService/Update"
	grpcDelete = "/VectorService/Delete"
	// grpcDeleteNamespace deletes every record of the namespace its
	// DeleteNamespaceRequest names.
	grpcDeleteNamespace = "/VectorService/DeleteNamespace"
)

// classify reads r's method, path as sent and API version into a write.
// It is an allow-list: a write it reads, a request that passes untouched
// (routes.go), or else unknown. A write of an API version extract does
// not read is unknown too.
func classify(r *http.Request) write {
	grpc := pinecone.IsGRPC(r)
	// A request-target starting with "//" is an authority to an upstream
	// that resolves it as a URL (WHATWG parsing, many gateways): it could
	// reach another host, or another path, than the one read here.
	if strings.HasPrefix(r.URL.Path, "//") || strings.HasPrefix(r.URL.EscapedPath(), "//") {
		return write{op: opNonCanonical, name: "request", grpc: grpc}
	}
	segments, ok := pathSegments(r)
	if !ok {
		return write{op: opUnknown, name: "request", grpc: grpc, pattern: "(a path that is not valid percent-encoding)", version: "none"}
	}
	if w := knownWrite(r, grpc, segments); w.op != opNone {
		if version, read := apiVersion(r); !read || w.documents() && !documentsVersion(version) {
			return write{op: opUnknown, name: w.name, grpc: grpc, pattern: pathPattern(segments), version: version}
		}
		return w
	}
	if !grpc && r.Method == http.MethodDelete && len(segments) == 3 && matchSegments("/namespaces/{}", segments) {
		// Adds no personal data, whatever the API version says: never
		// refused, and recorded (every record of the namespace deleted)
		// once the store answers success.
		return write{op: opNamespaceDelete, name: "namespace delete", namespace: segments[2]}
	}
	if grpc && r.URL.Path == grpcDeleteNamespace {
		// As the REST namespace delete; the namespace is in the message.
		return write{op: opNamespaceDelete, name: "namespace delete", grpc: true}
	}
	if isPass(r, segments, grpc) {
		return write{}
	}
	if nonCanonical(r.URL.Path, r.Method) {
		return write{op: opNonCanonical, name: "write", grpc: grpc}
	}
	version, _ := apiVersion(r)
	return write{op: opUnknown, name: "request", grpc: grpc, pattern: pathPattern(segments), version: version}
}

// knownWrite is the write r is, if its path is a write Lethe reads.
func knownWrite(r *http.Request, grpc bool, segments []string) write {
	p := r.URL.Path
	if grpc {
		switch p {
		case grpcUpsert:
			return write{op: opUpsert, name: "upsert", grpc: true}
		case grpcUpdate:
			return write{op: opUpdate, name: "update", grpc: true}
		case grpcDelete:
			return write{op: opDelete, name: "delete", grpc: true}
		}
	}
	// REST write paths are writes whatever the method and content type
	// say: an index host may route by path first. A gRPC body there is
	// then unreadable as JSON and refused.
	switch p {
	case pathUpsert:
		return write{op: opUpsert, name: "upsert"}
	case pathUpdate:
		return write{op: opUpdate, name: "update"}
	case pathDelete:
		return write{op: opDelete, name: "delete"}
	case pathBulkImports:
		if r.Method == http.MethodPost {
			return write{op: opBulkImport, name: "bulk import"}
		}
		return write{}
	}
	if matchSegments("/records/namespaces/{}/upsert", segments) {
		return write{op: opRecords, name: "records upsert", namespace: segments[3]}
	}
	if len(segments) == 5 && matchSegments("/namespaces/{}/documents/{}", segments) {
		if o, ok := documentsWrites["/documents/"+segments[4]]; ok {
			return write{op: o, name: "documents " + segments[4], namespace: segments[2]}
		}
	}
	return write{}
}

// documents reports whether w is a write of the documents API.
func (w write) documents() bool {
	return w.op == opDocumentsUpsert || w.op == opDocumentsUpdate || w.op == opDocumentsDelete
}

// documentsNamespace reads /namespaces/{namespace}/documents/{write} in a
// cleaned path (nonCanonical's test); the namespace holds no slash.
func documentsNamespace(p string) bool {
	rest, ok := strings.CutPrefix(p, pathNamespaces)
	if !ok {
		return false
	}
	ns, write, ok := strings.Cut(rest, "/")
	return ok && ns != "" && documentsWrites["/"+write] != 0
}

// recordsNamespace reads /records/namespaces/{namespace}/upsert in a
// cleaned path (nonCanonical's test); the namespace holds no slash.
func recordsNamespace(p string) (string, bool) {
	rest, ok := strings.CutPrefix(p, pathRecordsPrefix)
	if !ok {
		return "", false
	}
	ns, ok := strings.CutSuffix(rest, pathRecordsSuffix)
	return ns, ok && !strings.Contains(ns, "/")
}

// nonCanonical reports whether p names a write path once cleaned and
// lower-cased, other than as classify's exact matches: a REST write path
// spelled differently, or a gRPC write method spelled differently or
// called other than as gRPC over HTTP/2 (gRPC-Web, HTTP/1.1), which a
// gateway in front of the index could still turn into a write.
func nonCanonical(p, method string) bool {
	p = withoutSegmentDecorations(p)
	if !mayNameWrite(p) {
		return false // every read: no cleaning, no allocation
	}
	c := strings.ToLower(path.Clean("/" + p))
	switch c {
	case pathUpsert, pathUpdate, pathDelete:
		return true
	case pathBulkImports:
		return method == http.MethodPost
	}
	if strings.EqualFold(c, grpcUpsert) || strings.EqualFold(c, grpcUpdate) || strings.EqualFold(c, grpcDelete) {
		return true
	}
	if _, ok := recordsNamespace(c); ok || documentsNamespace(c) {
		return true
	}
	lower := strings.ToLower(p)
	trimmed := strings.TrimRight(lower, "/")
	if strings.HasPrefix(lower, pathNamespaces) {
		for suffix := range documentsWrites {
			if strings.HasSuffix(trimmed, suffix) {
				return true
			}
		}
	}
	return strings.HasPrefix(lower, pathRecordsPrefix) && strings.HasSuffix(trimmed, pathRecordsSuffix)
}

// withoutSegmentDecorations is p with what some servers drop from each
// segment before routing removed: path parameters (";x", which servlet
// containers and Spring strip) and trailing dots and spaces (which
// Windows-based servers strip). "." and ".." segments stay for path.Clean.
// A write path so decorated is nonCanonical, never an unknown request that
// permissive mode would forward.
func withoutSegmentDecorations(p string) string {
	if !strings.ContainsAny(p, "; ") && !strings.Contains(p, "./") && !strings.HasSuffix(p, ".") {
		return p // every read of the SDKs: no allocation
	}
	segments := strings.Split(p, "/")
	for i, seg := range segments {
		seg, _, _ = strings.Cut(seg, ";")
		if strings.Trim(seg, ".") != "" {
			seg = strings.TrimRight(seg, ". ")
		}
		segments[i] = seg
	}
	return strings.Join(segments, "/")
}

// writeWords are the last segments of the write paths.
var writeWords = [...]string{"upsert", "update", "delete", "imports"}

// mayNameWrite is nonCanonical's cheap filter: p can clean to a write path
// only if it has a ".." segment, or its last segment, past trailing
// slashes and dots, is a write path's last one in some case.
func mayNameWrite(p string) bool {
	if strings.Contains(p, "..") {
		return true
	}
	p = strings.TrimRight(p, "/.")
	last := p[strings.LastIndexByte(p, '/')+1:]
	for _, w := range writeWords {
		if strings.EqualFold(last, w) {
			return true
		}
	}
	return false
}

// tags reads the write's body with the index's rules.
func (w write) tags(rules *pcextract.Rules, body []byte) ([]extract.Tag, error) {
	if w.grpc {
		msg, err := grpcMessage(body)
		if err != nil {
			return nil, err
		}
		switch w.op {
		case opUpsert:
			return rules.UpsertGRPC(msg)
		case opUpdate:
			return rules.UpdateGRPC(msg)
		case opNamespaceDelete:
			return rules.DeleteNamespaceGRPC(msg)
		default:
			return rules.DeleteGRPC(msg)
		}
	}
	switch w.op {
	case opUpsert:
		return rules.UpsertREST(body)
	case opUpdate:
		return rules.UpdateREST(body)
	case opDelete:
		return rules.DeleteREST(body)
	case opRecords:
		return rules.UpsertRecordsREST(w.namespace, body)
	case opDocumentsUpsert:
		return rules.UpsertDocumentsREST(w.namespace, body)
	case opDocumentsUpdate:
		return rules.UpdateDocumentsREST(w.namespace, body)
	case opDocumentsDelete:
		return rules.DeleteDocumentsREST(w.namespace, body)
	default:
		return rules.BulkImport(), nil
	}
}

// grpcMessage returns the one message of a unary gRPC request body: a
// 5-byte prefix (compressed flag, big-endian length) and the message.
func grpcMessage(body []byte) ([]byte, error) {
	if len(body) < 5 {
		return nil, errors.New("the gRPC message is shorter than its 5-byte prefix")
	}
	if body[0] != 0 {
		return nil, errors.New("the gRPC message is compressed (grpc-encoding); send it uncompressed through the proxy")
	}
	n := binary.BigEndian.Uint32(body[1:5])
	switch {
	case uint64(n) > uint64(len(body)-5):
		return nil, errors.New("the gRPC message is shorter than its prefix declares")
	case uint64(n) < uint64(len(body)-5):
		return nil, errors.New("the gRPC body holds more than one message; a unary call sends one")
	}
	return body[5:], nil
}
