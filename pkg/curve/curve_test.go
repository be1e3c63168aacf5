package curve

import (
	"bytes"
	"crypto/ecdh"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/jobset-flux/jobset-flux/pkg/z85"
)

// ZeroMQ's published test keypair.
const (
	zmqSecret = "JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh6"
	zmqPublic = "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7"
)

// Known answer for Derive(0x00..0x1f, "default/lammps"). The secret was
// also checked against an HKDF-SHA256 written from RFC 5869 outside Go.
const (
	katSecretHex = "921099146233c56b995e0a2789ae68d43bac52646e301f834fba08093eaed1ef"
	katSecret    = "K}s2}vL+#sNo*jFIlpKwjfhs<zzie+pR3/rkcAr4"
	katPublic    = "NVxW:M*z.b*LVctnZjPs5o]4mp.ls[b4zZJn>U^D"
)

func zmqKeyPair(t testing.TB) KeyPair {
	t.Helper()
	var kp KeyPair
	for _, k := range []struct {
		text string
		dst  *[32]byte
	}{{zmqPublic, &kp.Public}, {zmqSecret, &kp.Secret}} {
		raw, err := z85.Decode(k.text)
		if err != nil {
			t.Fatalf("decoding %q: %v", k.text, err)
		}
		*k.dst = [32]byte(raw)
	}
	return kp
}

func seed0to31() []byte {
	seed := make([]byte, 32)
	for i := range seed {
		seed[i] = byte(i)
	}
	return seed
}

func x25519Public(t *testing.T, secret [32]byte) [32]byte {
	t.Helper()
	priv, err := ecdh.X25519().NewPrivateKey(secret[:])
	if err != nil {
		t.Fatalf("NewPrivateKey: %v", err)
	}
	return [32]byte(priv.PublicKey().Bytes())
}

func TestDeriveKnownAnswer(t *testing.T) {
	kp, err := Derive(seed0to31(), "default/lammps")
	if err != nil {
		t.Fatalf("Derive: %v", err)
	}
	want, err := hkdf.Key(sha256.New, seed0to31(), []byte("jobset-flux curve v1"), "default/lammps", 32)
	if err != nil {
		t.Fatalf("hkdf.Key: %v", err)
	}
	if !bytes.Equal(kp.Secret[:], want) {
		t.Errorf("secret = %x, HKDF gives %x", kp.Secret, want)
	}
	if got := hex.EncodeToString(kp.Secret[:]); got != katSecretHex {
		t.Errorf("secret = %s, pinned %s", got, katSecretHex)
	}
	if got := kp.SecretZ85(); got != katSecret {
		t.Errorf("SecretZ85() = %q, pinned %q", got, katSecret)
	}
	if got := kp.PublicZ85(); got != katPublic {
		t.Errorf("PublicZ85() = %q, pinned %q", got, katPublic)
	}
	if kp.Public != x25519Public(t, kp.Secret) {
		t.Errorf("public key is not X25519(secret)")
	}
}

func TestDeriveDeterministicAndSeparated(t *testing.T) {
	seed := seed0to31()
	a1, err := Derive(seed, "default/lammps")
	if err != nil {
		t.Fatal(err)
	}
	a2, err := Derive(bytes.Clone(seed), "default/lammps")
	if err != nil {
		t.Fatal(err)
	}
	if a1 != a2 {
		t.Errorf("same seed and context gave different keys")
	}
	otherSeed := bytes.Clone(seed)
	otherSeed[31] ^= 1
	longSeed := append(bytes.Clone(seed), 0)
	for name, args := range map[string]struct {
		seed    []byte
		context string
	}{
		"other namespace":  {seed, "prod/lammps"},
		"other jobset":     {seed, "default/lammps2"},
		"empty context":    {seed, ""},
		"one bit of seed":  {otherSeed, "default/lammps"},
		"longer seed":      {longSeed, "default/lammps"},
		"ambiguous concat": {seed, "defaultl/ammps"},
	} {
		kp, err := Derive(args.seed, args.context)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if kp.Secret == a1.Secret || kp.Public == a1.Public {
			t.Errorf("%s: gave the same key as seed 0..31 with default/lammps", name)
		}
		if kp.Public != x25519Public(t, kp.Secret) {
			t.Errorf("%s: public key is not X25519(secret)", name)
		}
	}
}

func TestDeriveShortSeed(t *testing.T) {
	for _, n := range []int{0, 1, 16, MinSeedLen - 1} {
		_, err := Derive(make([]byte, n), "default/lammps")
		if err == nil {
			t.Errorf("Derive accepted a %d-byte seed", n)
			continue
		}
		for _, want := range []string{"at least 32 bytes", fmt.Sprintf("got %d", n), "head -c 32 /dev/urandom | base64"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not contain %q", err, want)
			}
		}
	}
	if _, err := Derive(nil, "x"); err == nil {
		t.Error("Derive accepted a nil seed")
	}
}

func TestGenerateFixedReader(t *testing.T) {
	src := bytes.Repeat([]byte{7}, 32)
	a, err := Generate(bytes.NewReader(src))
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	b, err := Generate(bytes.NewReader(src))
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if a != b {
		t.Errorf("the same random bytes gave different keys")
	}
	if !bytes.Equal(a.Secret[:], src) {
		t.Errorf("secret = %x, want the 32 bytes read", a.Secret)
	}
	if a.Public != x25519Public(t, a.Secret) {
		t.Errorf("public key is not X25519(secret)")
	}
}

func TestGenerateCryptoRand(t *testing.T) {
	a, err := Generate(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Generate(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if a.Secret == b.Secret || a.Public == b.Public {
		t.Errorf("two keys from crypto/rand are equal")
	}
	if a.Secret == ([32]byte{}) {
		t.Errorf("secret is all zeros")
	}
	if a.Public != x25519Public(t, a.Secret) {
		t.Errorf("public key is not X25519(secret)")
	}
}

type failingReader struct{}

var errBroken = errors.New("entropy source broken")

func (failingReader) Read([]byte) (int, error) { return 0, errBroken }

func TestGenerateErrors(t *testing.T) {
	if _, err := Generate(nil); err == nil || !strings.Contains(err.Error(), "nil random source") {
		t.Errorf("Generate(nil) error = %v", err)
	}
	if _, err := Generate(bytes.NewReader(make([]byte, 31))); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("Generate(31 bytes) error = %v, want io.ErrUnexpectedEOF", err)
	}
	if _, err := Generate(failingReader{}); !errors.Is(err, errBroken) {
		t.Errorf("Generate(failing reader) error = %v, want it to wrap the reader's error", err)
	}
}

func TestZ85Helpers(t *testing.T) {
	kp := zmqKeyPair(t)
	if got := kp.PublicZ85(); got != zmqPublic {
		t.Errorf("PublicZ85() = %q, want %q", got, zmqPublic)
	}
	if got := kp.SecretZ85(); got != zmqSecret {
		t.Errorf("SecretZ85() = %q, want %q", got, zmqSecret)
	}
}

func TestFormattingRedactsSecret(t *testing.T) {
	kp := zmqKeyPair(t)
	for _, verb := range []string{"%v", "%s", "%+v", "%#v"} {
		out := fmt.Sprintf(verb, kp)
		if strings.Contains(out, zmqSecret) || strings.Contains(out, fmt.Sprint(kp.Secret[0], " ", kp.Secret[1], " ", kp.Secret[2])) {
			t.Errorf("%s leaks the secret: %s", verb, out)
		}
		if !strings.Contains(out, zmqPublic) || !strings.Contains(out, "REDACTED") {
			t.Errorf("%s = %s, want the public key and REDACTED", verb, out)
		}
	}
	// Formatting a struct that holds the keypair goes through String too.
	out := fmt.Sprintf("%+v", struct{ K KeyPair }{kp})
	if strings.Contains(out, zmqSecret) || !strings.Contains(out, "REDACTED") {
		t.Errorf("nested %%+v = %s", out)
	}
}
