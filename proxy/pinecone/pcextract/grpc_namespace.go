package pcextract

import (
	"github.com/lethe-privacy/lethe/extract"
	"google.golang.org/protobuf/encoding/protowire"
)

// DeleteNamespaceGRPC tags a DeleteNamespaceRequest{namespace=1} (gRPC
// /VectorService/DeleteNamespace): one extract.OpDeleteAll for the
// namespace when a rule covers it, else nothing, as DeleteNamespace for
// REST. An absent or empty namespace is the default one. A namespace
// sent twice, or not as UTF-8 text, is an error: a parser keeps the last.
func (r *Rules) DeleteNamespaceGRPC(msg []byte) ([]extract.Tag, error) {
	ns, hasNS := "", false
	p := protoFields{b: msg}
	for {
		num, typ, val, ok := p.next()
		if !ok {
			break
		}
		if num != 1 {
			continue // unknown fields are stepped over by wire type
		}
		err := once(&hasNS, typ, protowire.BytesType, "namespace")
		if err == nil {
			ns, err = protoNamespace(val)
		}
		if err != nil {
			return nil, grpcErr("namespace delete", err)
		}
	}
	if p.err != nil {
		return nil, grpcErr("namespace delete", p.err)
	}
	return r.DeleteNamespace(ns), nil
}
