package pgcapture

import "bytes"

// Decoding the few message fields a select's exchange needs without
// allocating: each helper accepts exactly the bodies pgproto3's Decode
// accepts, and returns slices that alias the body (valid only during the
// call that received the message, pgwire.Message).

// queryText returns the text of a simple-protocol Query, as
// pgproto3.Query.Decode does: one string, its terminator the body's last
// byte.
func queryText(body []byte) (string, bool) {
	if i := bytes.IndexByte(body, 0); len(body) > 0 && i == len(body)-1 {
		return string(body[:i]), true
	}
	return "", false
}

// executePortal returns the portal an Execute runs, as
// pgproto3.Execute.Decode does: a terminated name, then a 4-byte row
// limit (bytes after it are ignored there too).
func executePortal(body []byte) ([]byte, bool) {
	i := bytes.IndexByte(body, 0)
	if i < 0 || len(body)-(i+1) < 4 {
		return nil, false
	}
	return body[:i], true
}

// commandTag returns the tag of a CommandComplete ("SELECT 1"), as
// pgproto3.CommandComplete.Decode does: terminated by the body's last byte.
func commandTag(body []byte) ([]byte, bool) {
	if i := bytes.IndexByte(body, 0); i >= 0 && i == len(body)-1 {
		return body[:i], true
	}
	return nil, false
}
