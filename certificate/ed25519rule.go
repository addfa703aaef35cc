package certificate

import (
	"bytes"
	"encoding/hex"
)

// Ed25519 in certificates and checkpoints is RFC 8032 (section 5.1.7)
// as Go's crypto/ed25519 and OpenSSL (Node's crypto) both implement it:
// the cofactorless equation [S]B = R + [k]A, S below the group order L,
// and R compared as the 32 bytes written. The libraries differ on public
// keys that are not canonical encodings, and small-order keys let anyone
// forge signatures that verify under them, so a trusted key must be
// neither; that is checked once, when the keys are loaded, and leaves the
// libraries no key to disagree on.

// smallOrderY are the y coordinates (little endian, sign bit clear) of
// the eight points of order 1, 2, 4 and 8 on edwards25519: y = 1 (the
// identity), p-1 (order 2), 0 (order 4), and the two of order 8.
var smallOrderY = func() [][]byte {
	var out [][]byte
	for _, h := range []string{
		"0100000000000000000000000000000000000000000000000000000000000000",
		"ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
		"0000000000000000000000000000000000000000000000000000000000000000",
		"26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",
		"c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a",
	} {
		b, _ := hex.DecodeString(h)
		out = append(out, b)
	}
	return out
}()

// weakPublicKey says why a 32-byte Ed25519 public key may not be trusted:
// its y coordinate is not below p = 2^255-19 (a non-canonical encoding),
// or it is a point of small order. It is "" for any other key.
func weakPublicKey(pub []byte) string {
	y := bytes.Clone(pub)
	y[31] &= 0x7f // the sign of x
	// y >= p exactly when y is 2^255-19 ... 2^255-1: ed ff … ff 7f and up.
	if y[0] >= 0xed && y[31] == 0x7f && bytes.Count(y[1:31], []byte{0xff}) == 30 {
		return "is not a canonical encoding (y is not below 2^255-19)"
	}
	for _, s := range smallOrderY {
		if bytes.Equal(y, s) {
			return "is a point of small order, under which signatures can be forged"
		}
	}
	return ""
}
