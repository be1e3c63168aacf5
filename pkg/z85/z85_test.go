package z85

import (
	"bytes"
	"crypto/ecdh"
	"errors"
	"strings"
	"testing"
)

// The published ZeroMQ test keypair (from libzmq's test suite and the
// CurveZMQ documentation).
const (
	zmqSecret = "JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh6"
	zmqPublic = "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7"
)

var helloWorldBytes = []byte{0x86, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B}

func TestRFC32Vector(t *testing.T) {
	got, err := Encode(helloWorldBytes)
	if err != nil {
		t.Fatalf("Encode: %v", err)
	}
	if got != "HelloWorld" {
		t.Errorf("Encode = %q, want %q", got, "HelloWorld")
	}
	back, err := Decode("HelloWorld")
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if !bytes.Equal(back, helloWorldBytes) {
		t.Errorf("Decode = % X, want % X", back, helloWorldBytes)
	}
}

func TestZeroMQKeypair(t *testing.T) {
	secret, err := Decode(zmqSecret)
	if err != nil {
		t.Fatalf("Decode secret: %v", err)
	}
	public, err := Decode(zmqPublic)
	if err != nil {
		t.Fatalf("Decode public: %v", err)
	}
	if len(secret) != 32 || len(public) != 32 {
		t.Fatalf("decoded lengths %d, %d; want 32, 32", len(secret), len(public))
	}
	for _, tc := range []struct {
		name string
		raw  []byte
		want string
	}{{"secret", secret, zmqSecret}, {"public", public, zmqPublic}} {
		got, err := Encode(tc.raw)
		if err != nil {
			t.Fatalf("Encode %s: %v", tc.name, err)
		}
		if got != tc.want {
			t.Errorf("re-encoded %s = %q, want %q", tc.name, got, tc.want)
		}
	}
	priv, err := ecdh.X25519().NewPrivateKey(secret)
	if err != nil {
		t.Fatalf("NewPrivateKey: %v", err)
	}
	if derived := priv.PublicKey().Bytes(); !bytes.Equal(derived, public) {
		t.Errorf("X25519(secret) = % X, want % X", derived, public)
	}
}

func TestBoundaryGroups(t *testing.T) {
	for _, tc := range []struct {
		raw  []byte
		text string
	}{
		{nil, ""},
		{[]byte{0, 0, 0, 0}, "00000"},
		{[]byte{0xff, 0xff, 0xff, 0xff}, "%nSc0"},
		{[]byte{0, 0, 0, 1}, "00001"},
		{[]byte{0, 0, 0, 84}, "0000#"},
		{[]byte{0, 0, 0, 85}, "00010"},
	} {
		got, err := Encode(tc.raw)
		if err != nil {
			t.Fatalf("Encode(% X): %v", tc.raw, err)
		}
		if got != tc.text {
			t.Errorf("Encode(% X) = %q, want %q", tc.raw, got, tc.text)
		}
		back, err := Decode(tc.text)
		if err != nil {
			t.Fatalf("Decode(%q): %v", tc.text, err)
		}
		if len(back) != len(tc.raw) || !bytes.Equal(back, tc.raw) {
			t.Errorf("Decode(%q) = % X, want % X", tc.text, back, tc.raw)
		}
	}
}

func TestRoundTripAllByteValues(t *testing.T) {
	src := make([]byte, 256)
	for i := range src {
		src[i] = byte(i)
	}
	text, err := Encode(src)
	if err != nil {
		t.Fatalf("Encode: %v", err)
	}
	if len(text) != 320 {
		t.Errorf("len(Encode(256 bytes)) = %d, want 320", len(text))
	}
	if strings.Trim(text, alphabet) != "" {
		t.Errorf("Encode produced characters outside the alphabet: %q", text)
	}
	back, err := Decode(text)
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if !bytes.Equal(back, src) {
		t.Errorf("round trip mismatch: got % X", back)
	}
}

func TestEncodeErrors(t *testing.T) {
	for _, n := range []int{1, 2, 3, 5, 31, 33} {
		_, err := Encode(make([]byte, n))
		if !errors.Is(err, ErrLength) {
			t.Errorf("Encode(%d bytes) error = %v, want ErrLength", n, err)
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in      string
		is      error
		message string
	}{
		{"short", "Hell", ErrLength, "4 characters is not a multiple of 5"},
		{"long", "HelloWorld!", ErrLength, "11 characters is not a multiple of 5"},
		{"space", "Hello Worl", ErrInvalid, `position 5: character " "`},
		{"quote", `Hell"`, ErrInvalid, `position 4: character "\""`},
		{"underscore", "_ello", ErrInvalid, `position 0: character "_"`},
		{"high byte", "Hello\xffWorl", ErrInvalid, `position 5: character "\xff"`},
		{"overflow", "%%%%%", ErrInvalid, "positions 0-4: group exceeds 32 bits"},
		{"overflow by one", "Hello%nSc1", ErrInvalid, "positions 5-9: group exceeds 32 bits"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Decode(tc.in)
			if !errors.Is(err, tc.is) {
				t.Fatalf("Decode(%q) = %v, %v; want error %v", tc.in, got, err, tc.is)
			}
			if got != nil {
				t.Errorf("Decode(%q) returned data % X alongside an error", tc.in, got)
			}
			if !strings.Contains(err.Error(), tc.message) {
				t.Errorf("error %q does not contain %q", err, tc.message)
			}
		})
	}
}

func FuzzRoundTrip(f *testing.F) {
	f.Add(helloWorldBytes)
	f.Add([]byte{})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{1, 2, 3})
	for _, s := range []string{zmqSecret, zmqPublic} {
		raw, err := Decode(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// Alternate between trimming and zero-padding so both shapes of
		// ragged input are covered.
		if rem := len(data) % 4; rem != 0 {
			if len(data)%2 == 0 {
				data = data[:len(data)-rem]
			} else {
				data = append(data, make([]byte, 4-rem)...)
			}
		}
		text, err := Encode(data)
		if err != nil {
			t.Fatalf("Encode(% X): %v", data, err)
		}
		if len(text) != len(data)/4*5 {
			t.Fatalf("len(Encode) = %d, want %d", len(text), len(data)/4*5)
		}
		back, err := Decode(text)
		if err != nil {
			t.Fatalf("Decode(%q): %v", text, err)
		}
		if !bytes.Equal(back, data) {
			t.Fatalf("round trip: got % X, want % X", back, data)
		}
	})
}

func FuzzDecode(f *testing.F) {
	for _, s := range []string{"HelloWorld", zmqSecret, zmqPublic, "%%%%%", "%nSc0", "", "abc", "Hello World"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		raw, err := Decode(s)
		if err != nil {
			if raw != nil {
				t.Fatalf("Decode(%q) returned data alongside error %v", s, err)
			}
			return
		}
		text, err := Encode(raw)
		if err != nil {
			t.Fatalf("Encode(Decode(%q)): %v", s, err)
		}
		if text != s {
			t.Fatalf("Encode(Decode(%q)) = %q", s, text)
		}
	})
}

func TestDecodeErrorDoesNotEchoGroup(t *testing.T) {
	// Z85 text is usually a secret key; an overflow error must not copy
	// the group into logs.
	_, err := Decode("Hello%nSc1")
	if err == nil {
		t.Fatal("Decode accepted an overflowing group")
	}
	if strings.Contains(err.Error(), "%nSc1") {
		t.Errorf("error %q echoes the input group", err)
	}
}
