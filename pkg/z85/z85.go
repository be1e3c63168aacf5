// Package z85 implements the Z85 encoding of ZeroMQ RFC 32.
//
// Flux's CURVE certificates store the X25519 keys as Z85 text, and libzmq
// rejects anything that is not canonical Z85, so this package is strict:
// inputs must be whole 4-byte (or 5-character) groups and every group must
// fit in 32 bits. Z85 has no padding rules of its own; callers that need
// arbitrary lengths must frame them themselves.
package z85

import (
	"errors"
	"fmt"
)

// alphabet is the RFC 32 character set; the index of a character is its
// base-85 digit value.
const alphabet = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"

// invalid marks bytes outside the alphabet in the decoder table.
const invalid = 0xff

// decodeTable maps a byte to its digit value, or invalid. A table (rather
// than strings.IndexByte) keeps decoding of untrusted input constant work
// per character.
var decodeTable = func() [256]byte {
	var t [256]byte
	for i := range t {
		t[i] = invalid
	}
	for i := 0; i < len(alphabet); i++ {
		t[alphabet[i]] = byte(i)
	}
	return t
}()

// ErrLength is wrapped by the errors returned for inputs that are not a
// whole number of groups, so callers can tell framing mistakes from
// corrupted text with errors.Is.
var ErrLength = errors.New("z85: invalid length")

// ErrInvalid is wrapped by the errors returned for text that is not Z85
// (a foreign character or a group that overflows 32 bits).
var ErrInvalid = errors.New("z85: invalid input")

// Encode returns the Z85 text of src. RFC 32 defines Z85 only for whole
// 4-byte frames, so a length that is not a multiple of 4 is an error rather
// than being padded silently (padding would change the key material).
func Encode(src []byte) (string, error) {
	if len(src)%4 != 0 {
		return "", fmt.Errorf("%w: %d bytes is not a multiple of 4", ErrLength, len(src))
	}
	dst := make([]byte, len(src)/4*5)
	for i, j := 0, 0; i < len(src); i, j = i+4, j+5 {
		v := uint32(src[i])<<24 | uint32(src[i+1])<<16 | uint32(src[i+2])<<8 | uint32(src[i+3])
		for k := 4; k >= 0; k-- {
			dst[j+k] = alphabet[v%85]
			v /= 85
		}
	}
	return string(dst), nil
}

// Decode returns the bytes encoded by the Z85 text s. Errors name the
// offending character offset (0-based) so a corrupted certificate can be
// fixed by hand.
func Decode(s string) ([]byte, error) {
	if len(s)%5 != 0 {
		return nil, fmt.Errorf("%w: %d characters is not a multiple of 5", ErrLength, len(s))
	}
	dst := make([]byte, len(s)/5*4)
	for i, j := 0, 0; i < len(s); i, j = i+5, j+4 {
		// 85^5-1 exceeds 2^32, so accumulate in 64 bits and check once.
		var v uint64
		for k := 0; k < 5; k++ {
			d := decodeTable[s[i+k]]
			if d == invalid {
				return nil, fmt.Errorf("%w: position %d: character %q is not in the Z85 alphabet", ErrInvalid, i+k, s[i+k:i+k+1])
			}
			v = v*85 + uint64(d)
		}
		if v > 0xffffffff {
			// The group's text is left out on purpose: Z85 usually carries
			// secret keys, and error messages end up in logs.
			return nil, fmt.Errorf("%w: positions %d-%d: group exceeds 32 bits", ErrInvalid, i, i+4)
		}
		dst[j] = byte(v >> 24)
		dst[j+1] = byte(v >> 16)
		dst[j+2] = byte(v >> 8)
		dst[j+3] = byte(v)
	}
	return dst, nil
}
