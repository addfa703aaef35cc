package pcstore

import (
	"context"
	"strconv"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// The LSN headers Pinecone sends beside its responses: writes carry the
// log sequence number they were given, reads the highest one whose effects
// (and all earlier ones') they see.
const (
	headerRequestLSN    = "x-pinecone-request-lsn"
	headerMaxIndexedLSN = "x-pinecone-max-indexed-lsn"
)

// lsnSeen collects the LSN headers of the calls made with a context from
// withLSN.
type lsnSeen struct {
	mu         sync.Mutex
	request    uint64 // highest request LSN of the writes
	hasRequest bool
	indexed    uint64 // lowest max indexed LSN of the reads
	hasIndexed bool
	reads      int // reads made
	stamped    int // reads that carried the header
}

type lsnKey struct{}

// withLSN returns a context whose go-pinecone calls report their LSN
// headers into the returned lsnSeen.
func withLSN(ctx context.Context) (context.Context, *lsnSeen) {
	s := &lsnSeen{}
	return context.WithValue(ctx, lsnKey{}, s), s
}

// lsnInterceptor asks gRPC for each response's header metadata when the
// call's context comes from withLSN (go-pinecone returns only the message).
func lsnInterceptor(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	seen, _ := ctx.Value(lsnKey{}).(*lsnSeen)
	if seen == nil {
		return invoker(ctx, method, req, reply, cc, opts...)
	}
	var md metadata.MD
	err := invoker(ctx, method, req, reply, cc, append(opts, grpc.Header(&md))...)
	if err == nil {
		seen.record(md)
	}
	return err
}

func (s *lsnSeen) record(md metadata.MD) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if v, ok := headerLSN(md, headerRequestLSN); ok {
		s.request = max(s.request, v)
		s.hasRequest = true
		return
	}
	s.reads++
	if v, ok := headerLSN(md, headerMaxIndexedLSN); ok {
		if !s.hasIndexed || v < s.indexed {
			s.indexed = v
		}
		s.hasIndexed = true
		s.stamped++
	}
}

func headerLSN(md metadata.MD, name string) (uint64, bool) {
	vs := md.Get(name)
	if len(vs) == 0 {
		return 0, false
	}
	v, err := strconv.ParseUint(vs[0], 10, 64)
	return v, err == nil
}

// deleteRequestLSN is the request LSN the writes reported, if any did.
func (s *lsnSeen) deleteRequestLSN() (uint64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.request, s.hasRequest
}

// readsIndexed is the lowest max indexed LSN every read reported; ok is
// false when a read came without the header.
func (s *lsnSeen) readsIndexed() (lsn uint64, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.indexed, s.reads > 0 && s.stamped == s.reads
}
