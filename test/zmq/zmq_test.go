//go:build cgo

package zmq

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jobset-flux/jobset-flux/test/testsupport"

	"github.com/jobset-flux/jobset-flux/pkg/curve"
	"github.com/jobset-flux/jobset-flux/pkg/z85"
	"sigs.k8s.io/kustomize/kyaml/kio"
)

const (
	// exampleSeed is the public seed the examples' expected output uses.
	exampleSeed = "jobset-flux-example-seed-0123456789abcdef"
	secretKey   = "curve.cert"
	// okTimeout bounds a handshake that must succeed (it takes milliseconds).
	okTimeout = 5 * time.Second
	// failTimeout bounds one that must fail; it normally ends at the
	// server's failure event, well before this.
	failTimeout = 3 * time.Second
)

// ZeroMQ's published test keypair (from the CURVE documentation).
const (
	zmqTestSecret = "JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh6"
	zmqTestPublic = "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7"
)

// requireLibzmq fails (under CI=true) or skips when libzmq cannot do CURVE.
// Building this package already needs libzmq through pkg-config, so a
// missing library fails the build, which go test reports as a failure.
func requireLibzmq(t *testing.T) {
	t.Helper()
	if HasCurve() {
		return
	}
	msg := fmt.Sprintf("libzmq %s was built without CURVE (zmq_has(\"curve\") is false); install Debian's libzmq3-dev (.ci/apt/zmq.txt)", Version())
	testsupport.SkipOrFail(t, "%s", msg)
}

func newContext(t *testing.T) *Context {
	t.Helper()
	ctx, err := NewContext()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := ctx.Close(); err != nil {
			t.Error(err)
		}
	})
	return ctx
}

func repoPath(env, rel string) string {
	if p := os.Getenv(env); p != "" {
		return p
	}
	p, err := filepath.Abs(filepath.Join("..", "..", rel))
	if err != nil {
		panic(err)
	}
	return p
}

func jobsetFluxBin(t *testing.T) string {
	t.Helper()
	bin := repoPath("JOBSET_FLUX_BIN", "bin/jobset-flux")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("the function binary is missing (run `make build` or `make test-zmq`): %v", err)
	}
	return bin
}

// runFunction runs bin/jobset-flux with args. seed "" removes every seed
// variable from the environment, so the function draws a random key.
func runFunction(t *testing.T, seed string, args ...string) []byte {
	t.Helper()
	bin := jobsetFluxBin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "JOBSET_FLUX_KEY_SEED") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	if seed != "" {
		cmd.Env = append(cmd.Env, "JOBSET_FLUX_KEY_SEED="+seed)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %q: %v\nstderr:\n%s", bin, args, err, stderr.String())
	}
	return stdout.Bytes()
}

// renderedSecret is a certificate Secret found in the function's output.
type renderedSecret struct {
	jobset, namespace, secret string
	cert                      []byte
}

// certSecrets parses multi-document YAML and returns the curve.cert of
// every Secret, checking there is exactly one `<jobset>-flux-curve` Secret
// per JobSet.
func certSecrets(t *testing.T, out []byte) []renderedSecret {
	t.Helper()
	nodes, err := kio.FromBytes(out)
	if err != nil {
		t.Fatalf("parsing the output: %v", err)
	}
	var jobsets []string
	secrets := map[string]renderedSecret{}
	for _, n := range nodes {
		switch n.GetKind() {
		case "JobSet":
			jobsets = append(jobsets, n.GetName())
		case "Secret":
			b64, ok := n.GetDataMap()[secretKey]
			if !ok {
				t.Fatalf("Secret %s has no data[%q]", n.GetName(), secretKey)
			}
			cert, err := base64.StdEncoding.DecodeString(b64)
			if err != nil {
				t.Fatalf("Secret %s: data[%q] is not base64: %v", n.GetName(), secretKey, err)
			}
			if _, dup := secrets[n.GetName()]; dup {
				t.Fatalf("Secret %s appears twice", n.GetName())
			}
			secrets[n.GetName()] = renderedSecret{namespace: n.GetNamespace(), secret: n.GetName(), cert: cert}
		}
	}
	if len(jobsets) == 0 {
		t.Fatal("the output has no JobSet")
	}
	var found []renderedSecret
	for _, js := range jobsets {
		s, ok := secrets[js+"-flux-curve"]
		if !ok {
			t.Fatalf("no Secret %s-flux-curve for JobSet %s", js, js)
		}
		s.jobset = js
		found = append(found, s)
		delete(secrets, js+"-flux-curve")
	}
	if len(secrets) != 0 {
		t.Fatalf("Secrets that belong to no JobSet: %v", secrets)
	}
	return found
}

// certCase is one certificate to check, with where it came from.
type certCase struct {
	source string
	data   []byte
}

// functionCerts renders every example with the example seed (twice, to
// check reproducibility) and without a seed (twice, to check the keys are
// random), and returns one seeded and two random certificates per JobSet.
func functionCerts(t *testing.T) []certCase {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(repoPath("JOBSET_FLUX_EXAMPLES", "examples"), "*", "jobset.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples/*/jobset.yaml found (%v)", err)
	}
	var cases []certCase
	for _, f := range files {
		example := filepath.Base(filepath.Dir(f))
		seeded := certSecrets(t, runFunction(t, exampleSeed, f))
		again := certSecrets(t, runFunction(t, exampleSeed, f))
		random1 := certSecrets(t, runFunction(t, "", f))
		random2 := certSecrets(t, runFunction(t, "", f))
		for i, s := range seeded {
			if !bytes.Equal(s.cert, again[i].cert) {
				t.Errorf("%s: two renders with the same seed gave different certificates", example)
			}
			if bytes.Equal(random1[i].cert, random2[i].cert) || bytes.Equal(random1[i].cert, s.cert) {
				t.Errorf("%s: renders without a seed repeat a certificate", example)
			}
			// Derive's documented context is "<namespace>/<jobset name>".
			want, err := curve.Derive([]byte(exampleSeed), s.namespace+"/"+s.jobset)
			if err != nil {
				t.Fatal(err)
			}
			if got, _, err := curve.ParseCertificate(s.cert); err != nil || got != want {
				t.Errorf("%s: the seeded certificate is not curve.Derive(seed, %q) (parse error: %v)", example, s.namespace+"/"+s.jobset, err)
			}
			cases = append(cases,
				certCase{fmt.Sprintf("function/%s/%s/seeded", example, s.secret), s.cert},
				certCase{fmt.Sprintf("function/%s/%s/random-1", example, s.secret), random1[i].cert},
				certCase{fmt.Sprintf("function/%s/%s/random-2", example, s.secret), random2[i].cert},
			)
		}
	}
	return cases
}

// pkgCurveCerts returns 50 certificates of Generate()d and 50 of Derive()d
// keypairs, with names of varied shapes.
func pkgCurveCerts(t *testing.T) []certCase {
	t.Helper()
	names := []string{"lammps", "flux-cluster", "a", "ensemble.v2", "ns/x", strings.Repeat("n", 242)}
	var cases []certCase
	for i := range 50 {
		kp, err := curve.Generate(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		name := names[i%len(names)]
		cert, err := kp.Certificate(name)
		if err != nil {
			t.Fatalf("Generate #%d: Certificate(%q): %v", i, name, err)
		}
		cases = append(cases, certCase{fmt.Sprintf("curve/generate-%02d", i), cert})
	}
	for i := range 50 {
		seed := make([]byte, curve.MinSeedLen+i%7)
		rand.Read(seed)
		kp, err := curve.Derive(seed, fmt.Sprintf("team-%d/jobset-%d", i%3, i))
		if err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("jobset-%d", i)
		cert, err := kp.Certificate(name)
		if err != nil {
			t.Fatalf("Derive #%d: Certificate(%q): %v", i, name, err)
		}
		cases = append(cases, certCase{fmt.Sprintf("curve/derive-%02d", i), cert})
	}
	return cases
}

// keygenCerts returns the certificates of `keygen`, `keygen --secret NAME`
// and `keygen -o FILE` (which must be created private: Flux refuses a
// certificate readable by group or other).
func keygenCerts(t *testing.T) []certCase {
	t.Helper()
	bare := runFunction(t, "", "keygen")
	manifest := runFunction(t, "", "keygen", "--secret", "demo-flux-curve", "--namespace", "hpc")
	nodes, err := kio.FromBytes(manifest)
	if err != nil || len(nodes) != 1 || nodes[0].GetKind() != "Secret" || nodes[0].GetName() != "demo-flux-curve" {
		t.Fatalf("keygen --secret: want one Secret demo-flux-curve, got %d objects (%v):\n%s", len(nodes), err, manifest)
	}
	fromSecret, err := base64.StdEncoding.DecodeString(nodes[0].GetDataMap()[secretKey])
	if err != nil {
		t.Fatalf("keygen --secret: data[%q]: %v", secretKey, err)
	}
	file := filepath.Join(t.TempDir(), "curve.cert")
	runFunction(t, "", "keygen", "--name", "from-file", "-o", file)
	fromFile, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(file); err != nil || st.Mode().Perm()&0o077 != 0 {
		t.Errorf("keygen -o: the certificate file is readable by group or other (%v, %v); Flux refuses it", st.Mode(), err)
	}
	if bytes.Equal(bare, fromSecret) || bytes.Equal(bare, fromFile) {
		t.Error("keygen repeated a certificate")
	}
	return []certCase{{"keygen", bare}, {"keygen --secret", fromSecret}, {"keygen -o", fromFile}}
}

// TestCertificates checks every certificate from the three sources with
// libzmq and the line checker, and completes CURVE handshakes with it.
func TestCertificates(t *testing.T) {
	requireLibzmq(t)
	t.Logf("libzmq %s", Version())
	var cases []certCase
	cases = append(cases, functionCerts(t)...)
	cases = append(cases, pkgCurveCerts(t)...)
	cases = append(cases, keygenCerts(t)...)
	if t.Failed() {
		t.FailNow()
	}

	zctx := newContext(t)
	var handshakes int
	var total, slowest time.Duration
	publics := map[string]string{}
	for i, tc := range cases {
		t.Run(tc.source, func(t *testing.T) {
			cert := verifyStatic(t, tc.data)
			if t.Failed() {
				return
			}
			if prev, dup := publics[cert.Public]; dup {
				t.Errorf("same public key as %s", prev)
			}
			publics[cert.Public] = tc.source

			// Any client, as libzmq's CURVE server admits without a ZAP handler policy.
			other, err := CurveKeypair()
			if err != nil {
				t.Fatal(err)
			}
			// Every broker loads the same certificate, so a child broker
			// connects with the certificate's own keypair, and the parent's
			// ZAP handler admits only that key.
			domain := fmt.Sprintf("flux-%d", i)
			if err := zctx.Allow(domain, cert.Public); err != nil {
				t.Fatal(err)
			}
			own := KeyPair{Public: cert.Public, Secret: cert.Secret}
			for _, h := range []struct {
				what string
				h    Handshake
			}{
				{"client keypair from zmq_curve_keypair", Handshake{Server: own, ServerKey: cert.Public, Client: other, Timeout: okTimeout}},
				{"client = the certificate, ZAP admits only it", Handshake{Server: own, ServerKey: cert.Public, Client: own, ZAPDomain: domain, Timeout: okTimeout}},
			} {
				res, err := zctx.Run(h.h)
				if err != nil {
					t.Fatalf("%s: %v", h.what, err)
				}
				if !res.Succeeded() {
					t.Errorf("%s: handshake failed: exchanged=%v events=%v after %v", h.what, res.Exchanged, res.Events, res.Elapsed)
				}
				handshakes++
				total += res.Elapsed
				slowest = max(slowest, res.Elapsed)
			}
			if n := zctx.ZAPRequests(domain); n != 1 {
				t.Errorf("the ZAP handler saw %d requests for %s, want 1", n, domain)
			}
		})
	}
	if handshakes > 0 {
		t.Logf("%d certificates, %d handshakes (mean %v, slowest %v)", len(cases), handshakes, total/time.Duration(handshakes), slowest)
	}
}

// verifyStatic applies the checks that need no sockets: the line checker,
// zmq_z85_decode/encode, zmq_curve_public, and agreement with pkg/curve
// and pkg/z85.
func verifyStatic(t *testing.T, data []byte) checkedCert {
	t.Helper()
	cert, violations := checkCertificate(data)
	for _, v := range violations {
		t.Errorf("Flux parser rule: %s", v)
	}
	if t.Failed() {
		return cert
	}
	for _, k := range []struct{ name, z string }{{"public-key", cert.Public}, {"secret-key", cert.Secret}} {
		raw, err := Z85Decode(k.z)
		if err != nil {
			t.Errorf("%s: %v", k.name, err)
			continue
		}
		if len(raw) != 32 {
			t.Errorf("%s: zmq_z85_decode gave %d bytes, want 32", k.name, len(raw))
		}
		if back, err := Z85Encode(raw); err != nil || back != k.z {
			t.Errorf("%s: zmq_z85_encode(zmq_z85_decode(key)) differs from the key (not canonical Z85; %v)", k.name, err)
		}
		if mine, err := z85.Decode(k.z); err != nil || !bytes.Equal(mine, raw) {
			t.Errorf("%s: pkg/z85.Decode disagrees with zmq_z85_decode (%v)", k.name, err)
		}
	}
	pub, err := CurvePublic(cert.Secret)
	if err != nil {
		t.Errorf("zmq_curve_public: %v", err)
	} else if pub != cert.Public {
		t.Errorf("zmq_curve_public(secret-key) = %s, but public-key = %s", pub, cert.Public)
	}
	kp, name, err := curve.ParseCertificate(data)
	switch {
	case err != nil:
		t.Errorf("pkg/curve.ParseCertificate rejects a certificate libzmq accepts: %v", err)
	case name != cert.Name || kp.PublicZ85() != cert.Public || kp.SecretZ85() != cert.Secret:
		t.Errorf("pkg/curve.ParseCertificate read name %q public %s, the line checker %q %s", name, kp.PublicZ85(), cert.Name, cert.Public)
	}
	return cert
}

// TestZeroMQTestVector checks the harness against ZeroMQ's published
// keypair: libzmq, pkg/curve and a handshake must all agree on it.
func TestZeroMQTestVector(t *testing.T) {
	requireLibzmq(t)
	pub, err := CurvePublic(zmqTestSecret)
	if err != nil || pub != zmqTestPublic {
		t.Fatalf("zmq_curve_public(test secret) = %q, %v; want %q", pub, err, zmqTestPublic)
	}
	secret, err := z85.Decode(zmqTestSecret)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := Z85Decode(zmqTestSecret)
	if err != nil || !bytes.Equal(raw, secret) {
		t.Fatalf("zmq_z85_decode and pkg/z85.Decode disagree on the test secret (%v)", err)
	}
	client, err := CurveKeypair()
	if err != nil {
		t.Fatal(err)
	}
	res, err := newContext(t).Run(Handshake{Server: KeyPair{zmqTestPublic, zmqTestSecret}, ServerKey: zmqTestPublic, Client: client, Timeout: okTimeout})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Succeeded() {
		t.Fatalf("handshake with the test keypair failed: exchanged=%v events=%v", res.Exchanged, res.Events)
	}
}

// tamper changes the key's last Z85 character to the next one in the
// alphabet, which keeps it 40 valid Z85 characters that still decode.
func tamper(key string) string {
	i := strings.IndexByte(z85Alphabet, key[len(key)-1])
	return key[:len(key)-1] + string(z85Alphabet[(i+1)%len(z85Alphabet)])
}

// TestNegativeControls proves the harness can fail: each broken case must
// be refused by the check that is meant to catch it.
func TestNegativeControls(t *testing.T) {
	requireLibzmq(t)
	zctx := newContext(t)
	good := func(name string) ([]byte, checkedCert) {
		kp, err := curve.Generate(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		data, err := kp.Certificate(name)
		if err != nil {
			t.Fatal(err)
		}
		cert, violations := checkCertificate(data)
		if len(violations) != 0 {
			t.Fatalf("a good certificate fails the line checker: %v", violations)
		}
		return data, cert
	}
	expectRefused := func(t *testing.T, what string, h Handshake) {
		t.Helper()
		h.Timeout = failTimeout
		res, err := zctx.Run(h)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if res.Exchanged {
			t.Errorf("%s: a message got through (events %v)", what, res.Events)
		}
		if !res.Failed() {
			t.Errorf("%s: the server reported no failed handshake within %v (events %v)", what, failTimeout, res.Events)
		}
		t.Logf("%s: refused after %v, server events %v", what, res.Elapsed, res.Events)
	}

	t.Run("tampered public key", func(t *testing.T) {
		data, cert := good("tampered")
		bad := tamper(cert.Public)
		tampered := bytes.Replace(data, []byte(cert.Public), []byte(bad), 1)
		// Still well-formed text: only libzmq's key checks can catch it.
		if _, v := checkCertificate(tampered); len(v) != 0 {
			t.Fatalf("the tampered certificate should still pass the line rules: %v", v)
		}
		if raw, err := Z85Decode(bad); err != nil || len(raw) != 32 {
			t.Fatalf("the tampered key should still decode to 32 bytes: %v", err)
		}
		if pub, err := CurvePublic(cert.Secret); err != nil || pub == bad {
			t.Errorf("zmq_curve_public(secret) = %q (%v), equal to the tampered public key", pub, err)
		}
		if _, _, err := curve.ParseCertificate(tampered); err == nil {
			t.Error("pkg/curve.ParseCertificate accepts the tampered certificate")
		}
		server := KeyPair{Public: bad, Secret: cert.Secret}
		client, err := CurveKeypair()
		if err != nil {
			t.Fatal(err)
		}
		expectRefused(t, "generated client", Handshake{Server: server, ServerKey: bad, Client: client})
		domain := "flux-tampered"
		if err := zctx.Allow(domain, bad); err != nil {
			t.Fatal(err)
		}
		expectRefused(t, "client = the tampered certificate", Handshake{Server: server, ServerKey: bad, Client: server, ZAPDomain: domain})
	})

	t.Run("wrong server key", func(t *testing.T) {
		_, cert := good("right")
		_, other := good("other")
		client, err := CurveKeypair()
		if err != nil {
			t.Fatal(err)
		}
		expectRefused(t, "client given another certificate's public key",
			Handshake{Server: KeyPair{cert.Public, cert.Secret}, ServerKey: other.Public, Client: client})
	})

	t.Run("client is not the instance key", func(t *testing.T) {
		_, cert := good("instance")
		domain := "flux-outsider"
		if err := zctx.Allow(domain, cert.Public); err != nil {
			t.Fatal(err)
		}
		outsider, err := CurveKeypair()
		if err != nil {
			t.Fatal(err)
		}
		expectRefused(t, "ZAP refuses a client with another keypair",
			Handshake{Server: KeyPair{cert.Public, cert.Secret}, ServerKey: cert.Public, Client: outsider, ZAPDomain: domain})
		if n := zctx.ZAPRequests(domain); n == 0 {
			t.Error("the ZAP handler was never asked")
		}
	})

	t.Run("line checker", func(t *testing.T) {
		data, cert := good("valid-name")
		text := string(data)
		for _, tc := range []struct {
			name, rule string
			mutate     func(string) string
		}{
			{"41-character public key", "curve-key", func(s string) string {
				return strings.Replace(s, cert.Public, cert.Public+"0", 1)
			}},
			{"41-character secret key", "curve-key", func(s string) string {
				return strings.Replace(s, cert.Secret, cert.Secret+"0", 1)
			}},
			{"underscore in the name", "value", func(s string) string {
				return strings.Replace(s, `"valid-name"`, `"valid_name"`, 1)
			}},
			{"non-Z85 character in a key", "curve-key", func(s string) string {
				return strings.Replace(s, cert.Public, cert.Public[:39]+"~", 1)
			}},
			{"no name entry", "name", func(s string) string {
				return strings.Replace(s, `    name = "valid-name"`+"\n", "", 1)
			}},
			{"indented section line", "entry", func(s string) string {
				return strings.Replace(s, "\ncurve\n", "\n  curve\n", 1)
			}},
			{"unquoted value", "quote", func(s string) string {
				return strings.Replace(s, `"valid-name"`, `valid-name`, 1)
			}},
			{"key with an underscore", "key", func(s string) string {
				return strings.Replace(s, `    name = "valid-name"`+"\n", `    name = "valid-name"`+"\n"+`    bad_key = "x"`+"\n", 1)
			}},
			{"256-byte line", "line-length", func(s string) string {
				return "#" + strings.Repeat("x", 255) + "\n" + s
			}},
		} {
			mutated := tc.mutate(text)
			if mutated == text {
				t.Fatalf("%s: the mutation changed nothing", tc.name)
			}
			_, violations := checkCertificate([]byte(mutated))
			if !slices.ContainsFunc(violations, func(v string) bool { return strings.HasPrefix(v, tc.rule+":") }) {
				t.Errorf("%s: the line checker did not report rule %q (got %v)", tc.name, tc.rule, violations)
			}
			// pkg/curve's own parser must refuse it too.
			if _, _, err := curve.ParseCertificate([]byte(mutated)); err == nil {
				t.Errorf("%s: pkg/curve.ParseCertificate accepts it", tc.name)
			}
		}
	})
}

// TestZ85AgreesWithLibzmq compares pkg/z85 with zmq_z85_encode and
// zmq_z85_decode on random keys and on text that overflows 32 bits (about
// a quarter of random 40-character strings do), which both must refuse.
func TestZ85AgreesWithLibzmq(t *testing.T) {
	requireLibzmq(t)
	inputs := []string{"HelloWorld", "%nSc0%nSc0", "%nSc1", "#####", "00000", zmqTestSecret, zmqTestPublic}
	var rejected int
	buf := make([]byte, 40)
	for range 2000 {
		rand.Read(buf)
		for i := range buf {
			buf[i] = z85Alphabet[int(buf[i])%len(z85Alphabet)]
		}
		inputs = append(inputs, string(buf))
	}
	for _, s := range inputs {
		want, zerr := Z85Decode(s)
		got, err := z85.Decode(s)
		if (zerr == nil) != (err == nil) || !bytes.Equal(got, want) {
			t.Errorf("Decode(%q): pkg/z85 %x, %v; libzmq %x, %v", s, got, err, want, zerr)
		}
		if zerr != nil {
			rejected++
		}
	}
	raw := make([]byte, 32)
	for range 500 {
		rand.Read(raw)
		want, zerr := Z85Encode(raw)
		got, err := z85.Encode(raw)
		if zerr != nil || err != nil || got != want {
			t.Errorf("Encode(%x): pkg/z85 %q, %v; libzmq %q, %v", raw, got, err, want, zerr)
		}
	}
	t.Logf("%d strings decoded by both, %d refused by both (overflow)", len(inputs)-rejected, rejected)
	if rejected == 0 {
		t.Error("no input overflowed: the overflow cases were not exercised")
	}
}
