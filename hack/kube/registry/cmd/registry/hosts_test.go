package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

var hostsScript = filepath.Join("..", "..", "..", "images", "hosts.sh")

// TestHostsScript: one hosts.toml per registry host of the references,
// server and mirror both the local registry under the host's prefix, pull
// and resolve only.
func TestHostsScript(t *testing.T) {
	dir := t.TempDir()
	refs := filepath.Join(dir, "refs.txt")
	os.WriteFile(refs, []byte("docker.io/library/ubuntu:24.04\nghcr.io/a/b:latest\n# a comment\n\nghcr.io/a/c:1\njobset-flux.test/pause:1\n"), 0o644)
	certs := filepath.Join(dir, "certs.d")
	if out, err := exec.Command("bash", hostsScript, certs, "25000", refs).CombinedOutput(); err != nil {
		t.Fatalf("hosts.sh: %v\n%s", err, out)
	}
	entries, _ := os.ReadDir(certs)
	var hosts []string
	for _, e := range entries {
		hosts = append(hosts, e.Name())
	}
	sort.Strings(hosts)
	if strings.Join(hosts, " ") != "docker.io ghcr.io jobset-flux.test" {
		t.Errorf("host directories %v, want docker.io ghcr.io jobset-flux.test", hosts)
	}
	data, err := os.ReadFile(filepath.Join(certs, "ghcr.io", "hosts.toml"))
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(string(data), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			lines = append(lines, l)
		}
	}
	want := []string{`server = "http://127.0.0.1:25000/v2/ghcr.io"`, `override_path = true`,
		`[host."http://127.0.0.1:25000/v2/ghcr.io"]`, `capabilities = ["pull", "resolve"]`, `override_path = true`}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("ghcr.io/hosts.toml:\n%s\nwant:\n%s", data, strings.Join(want, "\n"))
	}
}

// TestHostsScriptDefaults: without a refs file it covers every host of
// images.txt; a bad port is refused.
func TestHostsScriptDefaults(t *testing.T) {
	certs := t.TempDir()
	if out, err := exec.Command("bash", hostsScript, certs, "5000").CombinedOutput(); err != nil {
		t.Fatalf("hosts.sh: %v\n%s", err, out)
	}
	for _, host := range []string{"docker.io", "ghcr.io", "jobset-flux.test", "nvcr.io"} {
		if _, err := os.Stat(filepath.Join(certs, host, "hosts.toml")); err != nil {
			t.Errorf("no hosts.toml for %s: %v", host, err)
		}
	}
	for _, port := range []string{"0", "65536", "x", ""} {
		if err := exec.Command("bash", hostsScript, t.TempDir(), port).Run(); err == nil {
			t.Errorf("hosts.sh with port %q succeeded, want a usage error", port)
		}
	}
}
