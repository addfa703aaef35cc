package pinecone_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/proxy/pinecone"
)

// Attacks on the relay that forwards a request body while it arrives (the
// property: the upstream never has whole a request the Hook refused or has
// not yet accepted; refused, oversized, slow, malformed or abandoned
// requests apply nothing upstream; the budget still bounds what is held;
// the client gets the answers it got when bodies were read whole first).
// Each test sends what no client library sends, against an upstream that
// records every byte it read and whether the body reached its end.

// actedOn reports whether an upstream acting on a body as it arrives could
// act on received: for gRPC, whether it holds a whole first message; for
// JSON, whether a streaming decoder reads a first value from it.
func actedOn(received []byte, grpc bool) bool {
	if grpc {
		return len(received) >= 5 && int64(len(received)) >= 5+int64(binary.BigEndian.Uint32(received[1:5]))
	}
	var v any
	return json.NewDecoder(bytes.NewReader(received)).Decode(&v) == nil
}

// grpcFrame frames msg as one gRPC message with the given compressed flag
// and declared length.
func grpcFrame(flag byte, declared int, msg []byte) []byte {
	frame := []byte{flag, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(frame[1:], uint32(declared))
	return append(frame, msg...)
}

// dribble writes body to pw, its first 64 bytes one at a time (a gRPC
// prefix split across DATA frames, a REST body across chunks) and the rest
// in 4 KiB writes, then closes pw when end is set (END_STREAM, the last
// chunk).
func dribble(pw *io.PipeWriter, body []byte, end bool) {
	for i := 0; i < len(body); {
		n := 1
		if i >= 64 {
			n = min(4096, len(body)-i)
		}
		if _, err := pw.Write(body[i : i+n]); err != nil {
			return
		}
		i += n
	}
	if end {
		pw.Close()
	}
}

// attackShape is a body no client library sends and the length of the
// part of it the relay may forward before the Hook has decided.
type attackShape struct {
	name string
	grpc bool
	body []byte
	open int
}

func attackShapes() []attackShape {
	msg := bytes.Repeat([]byte{0x0a, 0x03, 'a', 'b', 'c'}, 40) // 200 bytes of protobuf
	restObject := []byte(`{"namespace":"n","vectors":[{"id":"a","values":[0.5]}]}`)
	closing := bytes.LastIndexByte(restObject, '}')
	return []attackShape{
		{name: "grpc two messages in a unary call", grpc: true,
			body: append(grpcFrame(0, len(msg), msg), grpcFrame(0, len(msg), msg)...), open: 5 + len(msg) - 1},
		{name: "grpc trailing garbage", grpc: true,
			body: append(grpcFrame(0, len(msg), msg), "garbage"...), open: 5 + len(msg) - 1},
		{name: "grpc declared length 0 then a message", grpc: true,
			body: append(grpcFrame(0, 0, nil), grpcFrame(0, len(msg), msg)...), open: 4},
		{name: "grpc compressed flag 1", grpc: true,
			body: grpcFrame(1, len(msg), msg), open: 5 + len(msg) - 1},
		{name: "grpc body far larger than its prefix says", grpc: true,
			body: grpcFrame(0, 10, bytes.Repeat(msg, 300)), open: 14},
		{name: "grpc prefix declaring more than follows", grpc: true,
			body: grpcFrame(0, 1000, msg), open: 5 + len(msg) - 1},
		{name: "grpc prefix cut short", grpc: true, body: []byte{0, 0, 1}, open: 2},
		{name: "rest trailing whitespace of 1 MiB",
			body: append(bytes.Clone(restObject), bytes.Repeat([]byte(" \r\n\t"), 1<<18)...), open: closing},
		{name: "rest leading whitespace",
			body: append([]byte(" \r\n\t "), restObject...), open: 5 + closing},
		{name: "rest NDJSON with a complete first line and an unfinished second",
			body: []byte("{\"_id\":\"a\",\"user_id\":\"alice\"}\n{\"_id\":\"b\",\"user_id\":\"bo"), open: 28},
		{name: "rest two values on one line", body: []byte(`{"_id":"a","user_id":"alice"}{"_id":"b"}`), open: 28},
		{name: "rest a value then garbage", body: []byte(`{} garbage`), open: 1},
		{name: "rest a bare number", body: []byte(`12345`), open: 0},
	}
}

// Every shape, refused by the Hook once the upstream has all the relay
// forwards before the decision: the client gets the refusal, the
// upstream's request breaks off with exactly that part (nothing of the
// held tail), from which it could act on nothing, and the body's charge is
// returned. Accepted, the same shape reaches the upstream whole, byte for
// byte, and the client gets the upstream's answer.
func TestAttack_Stream_ShapesAreHeldUntilTheHookDecides(t *testing.T) {
	for _, shape := range attackShapes() {
		for _, refuse := range []bool{true, false} {
			verdict := map[bool]string{true: "refused", false: "accepted"}[refuse]
			t.Run(shape.name+" "+verdict, func(t *testing.T) {
				upstream := newTap(nil)
				hook := newWaitingHook(t, refuse)
				relay, base := tapRelay(t, upstream, pinecone.Config{Hook: hook})
				c := streamCases()[0]
				if shape.grpc {
					c = streamCases()[1]
				}
				pr, pw := io.Pipe()
				t.Cleanup(func() { pw.CloseWithError(io.ErrClosedPipe) })
				answer := c.send(t, base, "shape", pr)
				go dribble(pw, shape.body, true)
				waitFor(t, func() bool {
					rec, _ := upstream.get("shape")
					return len(rec.received) >= shape.open
				}, "the upstream gets what may go before the decision")
				close(hook.proceed)

				got := <-answer
				if rec, ok := upstream.get("shape"); ok || !refuse {
					waitFor(t, func() bool { rec, _ = upstream.get("shape"); return rec.ended }, "the upstream's request ends")
				}
				rec, _ := upstream.get("shape")
				if refuse {
					assert.Equal(t, map[bool]string{true: "grpc-status 9", false: "400 Bad Request"}[shape.grpc], got)
					assert.Equal(t, shape.body[:shape.open], append([]byte{}, rec.received...), "the upstream got the forwardable part and nothing of the tail")
					assert.False(t, rec.whole, "the upstream never had the body whole")
					assert.False(t, actedOn(rec.received, shape.grpc), "nothing the upstream got can be acted on")
				} else {
					assert.Equal(t, map[bool]string{true: "grpc-status 0", false: "200 OK"}[shape.grpc], got)
					assert.True(t, rec.whole)
					assert.Equal(t, shape.body, rec.received)
				}
				waitFor(t, func() bool { return relay.BufferedBytes() == 0 }, "the charge is returned")
			})
		}
	}
}

// The REST shapes' forwardable lengths end where the hold's contract says
// (before a closing byte), so the test above waits for the right amount.
func TestAttack_Stream_ShapesOpenLengths(t *testing.T) {
	for _, shape := range attackShapes() {
		if shape.grpc {
			continue
		}
		trimmed := bytes.TrimRight(shape.body, " \t\r\n")
		if shape.open > 0 {
			require.Contains(t, []byte("}]\""), shape.body[shape.open], "%s: the held tail starts at a closing byte", shape.name)
		}
		require.LessOrEqual(t, shape.open, len(trimmed)-1, shape.name)
	}
}
