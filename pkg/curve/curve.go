// Package curve makes the CURVE keypair that authenticates a Flux
// instance's overlay network and reads and writes it as the ZPL certificate
// file Flux brokers load (the format `flux keygen` writes).
//
// The certificate is a real secret: whoever holds it can join the instance
// and run work as its owner. Nothing in this package puts secret key
// material in an error message, and KeyPair redacts the secret key when it
// is formatted with fmt.
package curve

import (
	"crypto/ecdh"
	"crypto/hkdf"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"

	"github.com/jobset-flux/jobset-flux/pkg/z85"
)

// MinSeedLen is the shortest seed Derive accepts, in bytes. 32 bytes is the
// X25519 key size, so a shorter seed would make the key easier to guess
// than the curve itself.
const MinSeedLen = 32

// deriveSalt versions the derivation: changing how keys are derived must
// change this salt, so old and new renders never silently disagree.
const deriveSalt = "jobset-flux curve v1"

// KeyPair is an X25519 keypair in the raw 32-byte form libzmq uses.
type KeyPair struct {
	Public, Secret [32]byte
}

// Generate returns a fresh random keypair, using 32 bytes read from random
// as the secret key. Pass crypto/rand.Reader in production. The bytes are
// read here rather than by ecdh's GenerateKey because that ignores its
// reader since Go 1.26, and tests need a reproducible source.
func Generate(random io.Reader) (KeyPair, error) {
	if random == nil {
		return KeyPair{}, errors.New("curve: generate: nil random source")
	}
	var secret [32]byte
	if _, err := io.ReadFull(random, secret[:]); err != nil {
		return KeyPair{}, fmt.Errorf("curve: generate: reading random bytes: %w", err)
	}
	return fromSecret(secret), nil
}

// Derive returns the keypair for context (the "<namespace>/<jobset name>" of
// the instance) derived from seed, for renders that must be reproducible:
// the same seed and context always give the same certificate, so re-running
// the function does not rotate the key under running brokers.
//
// The seed is the secret; context only keeps instances that share a seed
// apart. The key is never derived from public data alone (names, namespaces,
// UIDs): anyone who can read the JobSet could recompute such a key and run
// work in the instance as its owner.
//
// The secret key is HKDF-SHA256(secret=seed, salt="jobset-flux curve v1",
// info=context), 32 bytes.
func Derive(seed []byte, context string) (KeyPair, error) {
	if len(seed) < MinSeedLen {
		return KeyPair{}, fmt.Errorf("curve: derive: the seed must be at least %d bytes of secret material, got %d (make one with `head -c 32 /dev/urandom | base64` and decode it before use)", MinSeedLen, len(seed))
	}
	key, err := hkdf.Key(sha256.New, seed, []byte(deriveSalt), context, 32)
	if err != nil {
		// HKDF-SHA256 only fails for outputs over 8160 bytes.
		panic(fmt.Sprintf("curve: derive: HKDF of 32 bytes failed: %v", err))
	}
	return fromSecret([32]byte(key)), nil
}

// fromSecret completes a keypair from its secret key. Every 32-byte string
// is a valid X25519 secret (the scalar is clamped when used), so an error
// here is a bug, not bad input.
func fromSecret(secret [32]byte) KeyPair {
	priv, err := ecdh.X25519().NewPrivateKey(secret[:])
	if err != nil {
		panic(fmt.Sprintf("curve: X25519 rejected a 32-byte secret: %v", err))
	}
	return KeyPair{Public: [32]byte(priv.PublicKey().Bytes()), Secret: secret}
}

// consistent reports whether Public is the X25519 public key of Secret,
// the check libzmq applies (zmq_curve_public) when a broker loads the
// certificate.
func (k KeyPair) consistent() bool {
	return fromSecret(k.Secret).Public == k.Public
}

// PublicZ85 returns the public key as the 40 Z85 characters libzmq and the
// certificate file use.
func (k KeyPair) PublicZ85() string {
	return mustEncode(k.Public)
}

// SecretZ85 returns the secret key as 40 Z85 characters. The result is
// secret: never log it or pass it through an unquoted shell string (Z85
// contains `$ & < > ( )`).
func (k KeyPair) SecretZ85() string {
	return mustEncode(k.Secret)
}

// mustEncode encodes a key; 32 bytes is always a whole number of Z85
// groups, so an error here is a bug in this package.
func mustEncode(key [32]byte) string {
	s, err := z85.Encode(key[:])
	if err != nil {
		panic(fmt.Sprintf("curve: encoding a 32-byte key: %v", err))
	}
	return s
}

// String shows the public key only, so that logging a KeyPair with %v or
// %s never leaks the secret.
func (k KeyPair) String() string {
	return "curve.KeyPair{Public: " + k.PublicZ85() + ", Secret: REDACTED}"
}

// GoString redacts the secret for %#v as well.
func (k KeyPair) GoString() string {
	return k.String()
}
