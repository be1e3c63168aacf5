package transform_test

import (
	"encoding/base64"
	"regexp"
	"strings"
	"testing"

	"github.com/jobset-flux/jobset-flux/pkg/curve"
	"github.com/jobset-flux/jobset-flux/pkg/plan"
	"github.com/kptdev/krm-functions-sdk/go/fn"
)

// TestCurveSecretMessages: class 7, every error about a CURVE Secret in
// the input names the Secret, the field (data[curve.cert] or
// stringData[curve.cert]) and a fix right for whose Secret it is:
// deleting it so that a new one is generated only for the Secret
// jobset-flux generates, never for one curve-secret names, which
// jobset-flux never generates; for that one, how to fill it.
func TestCurveSecretMessages(t *testing.T) {
	p := hProcessor(t)
	keys, err := curve.Derive([]byte(hSeed), "ns/js")
	if err != nil {
		t.Fatal(err)
	}
	valid, err := keys.Certificate("js")
	if err != nil {
		t.Fatal(err)
	}
	// A public key one character short: the wrong size.
	short := regexp.MustCompile(`(public-key = ")[^"]`).ReplaceAll(valid, []byte("$1"))
	b64 := func(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
	const dataField, plainField = "data[curve.cert]", "stringData[curve.cert]"
	cases := []struct {
		name, field, phrase string
		fields              map[string]any
		noFix               bool // the fix is the same for both: keep one certificate
	}{
		{"missing key", dataField, "is missing", map[string]any{"data": map[string]any{"other": "YQ=="}}, false},
		{"not a string", dataField, "is not a string", map[string]any{"data": map[string]any{plan.CertKey: []any{"a"}}}, false},
		{"wrong encoding", dataField, "is not valid base64", map[string]any{"data": map[string]any{plan.CertKey: "not base64!"}}, false},
		{"not a certificate", dataField, "is not a valid Flux CURVE certificate", map[string]any{"data": map[string]any{plan.CertKey: b64([]byte("hello\n"))}}, false},
		{"wrong key size", dataField, "must be 40 Z85 characters", map[string]any{"data": map[string]any{plan.CertKey: b64(short)}}, false},
		{"stringData not a string", plainField, "is not a string", map[string]any{"stringData": map[string]any{plan.CertKey: []any{"a"}}}, false},
		{"stringData invalid", plainField, "is not a valid Flux CURVE certificate", map[string]any{"stringData": map[string]any{plan.CertKey: "hello\n"}}, false},
		{"stringData differs", plainField, "differs from data[curve.cert]", map[string]any{"data": map[string]any{plan.CertKey: b64(valid)}, "stringData": map[string]any{plan.CertKey: string(short)}}, true},
	}
	for _, owner := range []struct {
		name, secret string
		ann          map[string]string
	}{
		{"generated", "js" + plan.SecretSuffix, map[string]string{"flux-framework.org/enabled": "true"}},
		{"curve-secret", "user-curve", map[string]string{"flux-framework.org/enabled": "true", "flux-framework.org/curve-secret": "user-curve"}},
	} {
		for _, c := range cases {
			secret := map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": owner.secret, "namespace": "ns"}}
			for k, v := range c.fields {
				secret[k] = v
			}
			rl, ok, _ := hRun(t, p, hList(t, nil, hJobSet{namespace: "ns", ann: owner.ann}.object(), secret))
			if ok {
				t.Errorf("%s, %s: rendered", owner.name, c.name)
				continue
			}
			var msg string
			for _, r := range rl.Results {
				if r.Severity == fn.Error && r.ResourceRef != nil && r.ResourceRef.Kind == "Secret" && r.Field != nil && r.Field.Path == c.field {
					msg = r.Message
				}
			}
			if msg == "" {
				t.Errorf("%s, %s: no error at %s of the Secret:\n%s", owner.name, c.name, c.field, w4Messages(rl, fn.Error))
				continue
			}
			wants := []string{c.phrase, `the CURVE Secret "` + owner.secret + `"`, dataField}
			var refuse []string
			switch {
			case c.noFix:
				refuse = []string{"delete the Secret", "never generates"}
			case owner.name == "generated":
				wants = append(wants, `delete the Secret "`+owner.secret+`" from the input so that the next render generates a new one`)
				refuse = []string{"never generates"}
			default:
				wants = append(wants, "never generates or replaces it", "jobset-flux keygen --secret user-curve --namespace ns", "set curve-secret to a Secret that holds one")
				refuse = []string{"delete"}
			}
			for _, w := range wants {
				if !strings.Contains(msg, w) {
					t.Errorf("%s, %s: the message does not say %q:\n%s", owner.name, c.name, w, msg)
				}
			}
			for _, r := range refuse {
				if strings.Contains(msg, r) {
					t.Errorf("%s, %s: the message says %q, wrong for this Secret:\n%s", owner.name, c.name, r, msg)
				}
			}
		}
	}
}
