package certificate

import (
	"bytes"
	"encoding/hex"
	"math/big"
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
	if !onCurve(y) {
		return "is not a point of edwards25519 (RFC 8032 section 5.1.3 cannot decode it)"
	}
	return ""
}

// Field constants of edwards25519 (RFC 8032 section 5.1).
var (
	fieldP    = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 255), big.NewInt(19))
	curveD    = curveConstantD()
	halfOrder = new(big.Int).Rsh(new(big.Int).Sub(fieldP, big.NewInt(1)), 1) // (p-1)/2
)

// curveConstantD is d = -121665/121666 mod p.
func curveConstantD() *big.Int {
	inv := new(big.Int).ModInverse(big.NewInt(121666), fieldP)
	d := new(big.Int).Mul(big.NewInt(-121665), inv)
	return d.Mod(d, fieldP)
}

// onCurve reports whether some x satisfies the curve equation for y (little
// endian, below p, sign bit clear): whether x^2 = (y^2-1)/(d*y^2+1) is a
// square mod p (Euler's criterion). Keys that fail are refused at load,
// where libraries differ: one refuses them as keys, another only fails
// each signature.
func onCurve(yLE []byte) bool {
	be := make([]byte, len(yLE))
	for i, b := range yLE {
		be[len(yLE)-1-i] = b
	}
	y := new(big.Int).SetBytes(be)
	y2 := new(big.Int).Mul(y, y)
	u := new(big.Int).Sub(y2, big.NewInt(1))
	v := new(big.Int).Add(new(big.Int).Mul(curveD, y2), big.NewInt(1))
	x2 := new(big.Int).Mul(u.Mod(u, fieldP), new(big.Int).ModInverse(v.Mod(v, fieldP), fieldP))
	x2.Mod(x2, fieldP)
	if x2.Sign() == 0 {
		return true
	}
	return new(big.Int).Exp(x2, halfOrder, fieldP).Cmp(big.NewInt(1)) == 0
}
