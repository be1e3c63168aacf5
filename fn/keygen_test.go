package main

import (
	"bytes"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jobset-flux/jobset-flux/pkg/curve"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

func TestKeygenCertificate(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"keygen", "--name", "lammps"}, nil, &out, &errOut); code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	keys, name, err := curve.ParseCertificate(out.Bytes())
	if err != nil || name != "lammps" {
		t.Fatalf("ParseCertificate: name %q, %v", name, err)
	}
	var again bytes.Buffer
	run([]string{"keygen"}, nil, &again, &errOut)
	other, _, _ := curve.ParseCertificate(again.Bytes())
	if other.Public == keys.Public {
		t.Error("two keygen runs gave the same key")
	}
}

func TestKeygenSecretFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "secret.yaml")
	var out, errOut bytes.Buffer
	code := run([]string{"keygen", "--secret", "js-flux-curve", "--namespace", "hpc", "-o", path}, nil, &out, &errOut)
	if code != exitOK || out.Len() != 0 {
		t.Fatalf("exit %d, stdout %q, stderr %s", code, out.String(), errOut.String())
	}
	info, err := os.Stat(path)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("stat: %v, mode %v; want 0600", err, info.Mode())
	}
	data, _ := os.ReadFile(path)
	rn, err := yaml.Parse(string(data))
	if err != nil {
		t.Fatal(err)
	}
	if rn.GetKind() != "Secret" || rn.GetName() != "js-flux-curve" || rn.GetNamespace() != "hpc" {
		t.Errorf("manifest = %s", data)
	}
	if strings.Contains(string(data), "stringData") {
		t.Error("the Secret must use data, not stringData")
	}
	value, err := rn.Pipe(yaml.Lookup("data", "curve.cert"))
	if err != nil || value == nil {
		t.Fatalf("no data[curve.cert]: %v", err)
	}
	cert, err := base64.StdEncoding.DecodeString(yaml.GetValue(value))
	if err != nil {
		t.Fatalf("data[curve.cert]: %v", err)
	}
	if _, _, err := curve.ParseCertificate(cert); err != nil {
		t.Errorf("the Secret's certificate: %v", err)
	}
}

func TestKeygenRejectsBadNames(t *testing.T) {
	for _, args := range [][]string{
		{"keygen", "--secret", "bad\nname"},
		{"keygen", "--secret", "ok", "--namespace", "Bad_NS"},
		{"keygen", "--name", `a"b`},
		{"keygen", "extra"},
		{"keygen", "--no-such-flag"},
	} {
		var out, errOut bytes.Buffer
		if code := run(args, nil, &out, &errOut); code != exitUsage || out.Len() != 0 || errOut.Len() == 0 {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 with a message and no output", args, code, out.String(), errOut.String())
		}
	}
}

func TestVersion(t *testing.T) {
	var out bytes.Buffer
	if code := run([]string{"version"}, nil, &out, &out); code != exitOK || !strings.HasPrefix(out.String(), "jobset-flux "+version+" (commit "+commit+")") {
		t.Errorf("exit %d, output %q", code, out.String())
	}
}
