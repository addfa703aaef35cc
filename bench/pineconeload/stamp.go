package main

import (
	"bytes"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// stampPlaceholder ends every record id of a -fresh-ids template; each
// upsert overwrites it with a number no other upsert of the run used, in
// 16 hex digits: the same length, so the JSON and the protobuf framing
// stay valid and no upsert is encoded again.
const stampPlaceholder = "@@@@@@@@@@@@@@@@"

// body is one encoding of an upsert (REST JSON or gRPC message) that the
// clients send: the same bytes every time, or with -fresh-ids a copy of
// them whose record ids are new each time.
type body struct {
	template []byte
	stamps   []int // offsets of the placeholders; nil: send template as it is
	next     *atomic.Uint64
	copies   sync.Pool
}

// newBody finds the n placeholders of template when fresh, and starts the
// stamps at the clock in nanoseconds, so that runs after one another never
// repeat an id in a ledger kept between them.
func newBody(template []byte, n int, fresh bool, next *atomic.Uint64) (*body, error) {
	b := &body{template: template, next: next}
	if !fresh {
		return b, nil
	}
	for at := 0; ; {
		i := bytes.Index(template[at:], []byte(stampPlaceholder))
		if i < 0 {
			break
		}
		b.stamps = append(b.stamps, at+i)
		at += i + len(stampPlaceholder)
	}
	if len(b.stamps) != n {
		return nil, fmt.Errorf("the upsert template holds %d id placeholders, want %d", len(b.stamps), n)
	}
	if next.Load() == 0 {
		next.Store(uint64(time.Now().UnixNano()))
	}
	return b, nil
}

// get returns the bytes of the next upsert and a func to call once they
// are sent.
func (b *body) get() ([]byte, func()) {
	if b.stamps == nil {
		return b.template, func() {}
	}
	buf, _ := b.copies.Get().(*[]byte)
	if buf == nil {
		buf = new([]byte)
	}
	*buf = append((*buf)[:0], b.template...)
	var digits [16]byte
	for _, at := range b.stamps {
		n := b.next.Add(1)
		hex := strconv.AppendUint(digits[:0], n, 16)
		copy((*buf)[at:at+len(stampPlaceholder)], bytes.Repeat([]byte{'0'}, len(stampPlaceholder)-len(hex)))
		copy((*buf)[at+len(stampPlaceholder)-len(hex):], hex)
	}
	return *buf, func() { b.copies.Put(buf) }
}
