package transform_test

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/jobset-flux/jobset-flux/pkg/curve"
	"github.com/jobset-flux/jobset-flux/pkg/plan"
)

// The generated Secret uses data, and the key material is nowhere else:
// not in the ConfigMap, the JobSet, the results, or the output outside the
// Secret's base64 value.
func TestSecretOutput(t *testing.T) {
	p := hProcessor(t)
	rl, ok, out := hRun(t, p, hList(t, nil, hJobSet{namespace: "team"}.object()))
	if !ok {
		t.Fatal(hDump(rl))
	}
	keys, err := curve.Derive([]byte(hSeed), "team/js")
	if err != nil {
		t.Fatal(err)
	}
	s := hFind(rl, "Secret", "js"+plan.SecretSuffix)
	if s == nil {
		t.Fatal("no Secret")
	}
	if _, has, _ := s.NestedStringMap("stringData"); has {
		t.Error("the Secret has stringData")
	}
	value, _, _ := s.NestedString("data", plan.CertKey)
	cert, err := base64.StdEncoding.DecodeString(value)
	if err != nil {
		t.Fatal(err)
	}
	parsed, _, err := curve.ParseCertificate(cert)
	if err != nil || parsed.SecretZ85() != keys.SecretZ85() {
		t.Fatalf("the Secret does not hold the derived keys: %v", err)
	}
	for _, k := range []string{keys.SecretZ85(), keys.PublicZ85(), hSeed} {
		if bytes.Contains(out, []byte(k)) {
			t.Errorf("the output holds key material or the seed in plain text")
		}
		if strings.Contains(hDump(rl), k) {
			t.Errorf("the results hold key material")
		}
	}
	// The same JobSet under another name or namespace gets another key:
	// the key depends on the seed and the identity, never on public data alone.
	other, err := curve.Derive([]byte(hSeed), "team/js2")
	if err != nil || other.SecretZ85() == keys.SecretZ85() {
		t.Errorf("different JobSets share a key")
	}
}
