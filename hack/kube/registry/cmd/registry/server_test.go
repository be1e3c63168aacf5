package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/jobset-flux/jobset-flux/hack/kube/registry/oci"
)

// fixture is a layout with three images: ubuntu on docker.io and on
// jobset-flux.test (the same name on two hosts, different content) and
// one more on ghcr.io, served by a test server.
type fixture struct {
	layout oci.Layout
	srv    *httptest.Server
	log    *syncBuffer
	images map[string]oci.Descriptor // ref -> manifest
	layers map[string]oci.Layer      // ref -> its one layer
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{layout: oci.Layout{Dir: filepath.Join(t.TempDir(), "oci")}, log: &syncBuffer{},
		images: map[string]oci.Descriptor{}, layers: map[string]oci.Layer{}}
	if err := f.layout.Init(); err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{"docker.io/library/ubuntu:24.04", "jobset-flux.test/library/ubuntu:24.04",
		"ghcr.io/converged-computing/metric-lammps:latest"} {
		root := t.TempDir()
		if err := os.WriteFile(filepath.Join(root, "which"), []byte(ref+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		ly, err := f.layout.WriteLayer(root, oci.LayerOptions{Gzip: true})
		if err != nil {
			t.Fatal(err)
		}
		d, err := f.layout.AddImage(oci.ImageSpec{Ref: ref, Config: oci.ContainerConfig{Cmd: []string{"bash"}}}, []oci.Layer{ly})
		if err != nil {
			t.Fatal(err)
		}
		f.images[ref], f.layers[ref] = d, ly
	}
	s, err := newServer(f.layout, f.log)
	if err != nil {
		t.Fatal(err)
	}
	f.srv = httptest.NewServer(s.logged(s))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fixture) do(t *testing.T, method, path string, header ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, f.srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := f.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

func digestOf(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

func TestBase(t *testing.T) {
	f := newFixture(t)
	resp, body := f.do(t, "GET", "/v2/")
	if resp.StatusCode != 200 || resp.Header.Get("Docker-Distribution-API-Version") != "registry/2.0" || string(body) != "{}" {
		t.Errorf("GET /v2/: %d %q %s, want 200 with the API version header", resp.StatusCode, resp.Header.Get("Docker-Distribution-API-Version"), body)
	}
}

// TestManifest: by tag and by digest, GET and HEAD, with the headers
// containerd reads (Content-Type to pick a parser, Docker-Content-Digest
// to verify, Content-Length).
func TestManifest(t *testing.T) {
	f := newFixture(t)
	want := f.images["ghcr.io/converged-computing/metric-lammps:latest"]
	for _, path := range []string{"/v2/converged-computing/metric-lammps/manifests/latest",
		"/v2/converged-computing/metric-lammps/manifests/" + want.Digest,
		"/v2/converged-computing/metric-lammps/manifests/latest?ns=ghcr.io"} {
		resp, body := f.do(t, "GET", path, "Accept", oci.MediaTypeManifest)
		if resp.StatusCode != 200 || digestOf(body) != want.Digest || int64(len(body)) != want.Size {
			t.Fatalf("GET %s: %d, %d bytes digest %s; want 200 and %s (%d bytes)", path, resp.StatusCode, len(body), digestOf(body), want.Digest, want.Size)
		}
		checkHeaders(t, "GET "+path, resp, oci.MediaTypeManifest, want.Digest, want.Size)
		resp, body = f.do(t, "HEAD", path)
		if resp.StatusCode != 200 || len(body) != 0 {
			t.Errorf("HEAD %s: %d with %d bytes, want 200 and no body", path, resp.StatusCode, len(body))
		}
		checkHeaders(t, "HEAD "+path, resp, oci.MediaTypeManifest, want.Digest, want.Size)
	}
}

func checkHeaders(t *testing.T, what string, resp *http.Response, mediaType, digest string, size int64) {
	t.Helper()
	h := resp.Header
	if h.Get("Content-Type") != mediaType || h.Get("Docker-Content-Digest") != digest || h.Get("Content-Length") != fmt.Sprint(size) {
		t.Errorf("%s: Content-Type %q, Docker-Content-Digest %q, Content-Length %q; want %s, %s, %d",
			what, h.Get("Content-Type"), h.Get("Docker-Content-Digest"), h.Get("Content-Length"), mediaType, digest, size)
	}
}

// TestBlobs: the config and layer of an image, whole and by range.
func TestBlobs(t *testing.T) {
	f := newFixture(t)
	ref := "docker.io/library/ubuntu:24.04"
	m, err := f.layout.ReadManifest(f.images[ref])
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []oci.Descriptor{m.Config, m.Layers[0]} {
		path := "/v2/library/ubuntu/blobs/" + d.Digest + "?ns=docker.io"
		resp, body := f.do(t, "GET", path)
		if resp.StatusCode != 200 || digestOf(body) != d.Digest {
			t.Fatalf("GET %s: %d, digest %s", path, resp.StatusCode, digestOf(body))
		}
		checkHeaders(t, "GET "+path, resp, "application/octet-stream", d.Digest, d.Size)
		resp, _ = f.do(t, "HEAD", path)
		checkHeaders(t, "HEAD "+path, resp, "application/octet-stream", d.Digest, d.Size)
		resp, part := f.do(t, "GET", path, "Range", "bytes=2-5")
		if resp.StatusCode != http.StatusPartialContent || !bytes.Equal(part, body[2:6]) {
			t.Errorf("GET %s bytes 2-5: %d %q, want 206 %q", path, resp.StatusCode, part, body[2:6])
		}
	}
}

// TestHosts: the same name on two hosts is told apart by containerd's ns
// query and is ambiguous without it.
func TestHosts(t *testing.T) {
	f := newFixture(t)
	for _, host := range []string{"docker.io", "jobset-flux.test"} {
		want := f.images[host+"/library/ubuntu:24.04"]
		resp, body := f.do(t, "GET", "/v2/library/ubuntu/manifests/24.04?ns="+host)
		if resp.StatusCode != 200 || digestOf(body) != want.Digest {
			t.Errorf("ns=%s: %d %s, want %s", host, resp.StatusCode, digestOf(body), want.Digest)
		}
	}
	expectError(t, f, "GET", "/v2/library/ubuntu/manifests/24.04", 404, "NAME_UNKNOWN")
	expectError(t, f, "GET", "/v2/library/ubuntu/manifests/24.04?ns=quay.io", 404, "NAME_UNKNOWN")
	// A blob of docker.io's ubuntu is not jobset-flux.test's.
	other := f.layers["docker.io/library/ubuntu:24.04"].Digest
	expectError(t, f, "GET", "/v2/library/ubuntu/blobs/"+other+"?ns=jobset-flux.test", 404, "BLOB_UNKNOWN")
}

func TestErrors(t *testing.T) {
	f := newFixture(t)
	lammps := f.layers["ghcr.io/converged-computing/metric-lammps:latest"].Digest
	for _, c := range []struct {
		method, path string
		status       int
		code         string
	}{
		{"GET", "/v2/converged-computing/metric-lammps/manifests/v1", 404, "MANIFEST_UNKNOWN"},
		{"GET", "/v2/converged-computing/metric-lammps/manifests/sha256:" + strings.Repeat("0", 64), 404, "MANIFEST_UNKNOWN"},
		{"HEAD", "/v2/converged-computing/metric-lammps/manifests/v1", 404, ""},
		{"GET", "/v2/converged-computing/metric-lammps/blobs/sha256:" + strings.Repeat("0", 64), 404, "BLOB_UNKNOWN"},
		{"GET", "/v2/converged-computing/other/blobs/" + lammps, 404, "NAME_UNKNOWN"},
		{"GET", "/v2/nothing/here", 404, "NAME_UNKNOWN"},
		{"GET", "/other", 404, "NAME_UNKNOWN"},
		{"PUT", "/v2/converged-computing/metric-lammps/manifests/latest", 405, "UNSUPPORTED"},
		{"DELETE", "/v2/converged-computing/metric-lammps/blobs/" + lammps, 405, "UNSUPPORTED"},
		{"POST", "/v2/converged-computing/metric-lammps/blobs/uploads/", 405, "UNSUPPORTED"},
	} {
		expectError(t, f, c.method, c.path, c.status, c.code)
	}
}

// expectError checks a status and, unless code is empty (HEAD), the
// registry error body.
func expectError(t *testing.T, f *fixture, method, path string, status int, code string) {
	t.Helper()
	resp, body := f.do(t, method, path)
	if resp.StatusCode != status {
		t.Errorf("%s %s: %d, want %d", method, path, resp.StatusCode, status)
		return
	}
	if code == "" {
		return
	}
	var e struct {
		Errors []struct{ Code, Message string }
	}
	if err := json.Unmarshal(body, &e); err != nil || len(e.Errors) != 1 || e.Errors[0].Code != code || e.Errors[0].Message == "" {
		t.Errorf("%s %s: body %s, want one error with code %s and a message", method, path, body, code)
	}
	if resp.Header.Get("Content-Type") != "application/json" {
		t.Errorf("%s %s: Content-Type %q", method, path, resp.Header.Get("Content-Type"))
	}
}

func TestTagsList(t *testing.T) {
	f := newFixture(t)
	resp, body := f.do(t, "GET", "/v2/converged-computing/metric-lammps/tags/list")
	if resp.StatusCode != 200 || strings.TrimSpace(string(body)) != `{"name":"converged-computing/metric-lammps","tags":["latest"]}` {
		t.Errorf("tags/list: %d %s", resp.StatusCode, body)
	}
}

// TestLog: one line per request with method, URI and status.
func TestLog(t *testing.T) {
	f := newFixture(t)
	f.do(t, "GET", "/v2/")
	f.do(t, "HEAD", "/v2/converged-computing/metric-lammps/manifests/latest")
	f.do(t, "GET", "/v2/converged-computing/metric-lammps/manifests/nope")
	lines := strings.Split(strings.TrimSpace(f.log.String()), "\n")
	want := []string{" GET /v2/ 200 2 ", " HEAD /v2/converged-computing/metric-lammps/manifests/latest 200 0 ",
		" GET /v2/converged-computing/metric-lammps/manifests/nope 404 "}
	if len(lines) != len(want) {
		t.Fatalf("log:\n%s\nwant %d lines", f.log.String(), len(want))
	}
	for i, w := range want {
		if !strings.Contains(lines[i], w) {
			t.Errorf("log line %q lacks %q", lines[i], w)
		}
	}
}

// TestLoadChecksBlobs: a layout with a missing or truncated blob, or a
// manifest without a full reference, is refused at start, not served.
func TestLoadChecksBlobs(t *testing.T) {
	f := newFixture(t)
	ly := f.layers["docker.io/library/ubuntu:24.04"]
	path, _ := f.layout.BlobPath(ly.Digest)
	data, _ := os.ReadFile(path)
	if err := os.WriteFile(path, data[:len(data)-1], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := newServer(f.layout, io.Discard); err == nil || !strings.Contains(err.Error(), "bytes, descriptor says") {
		t.Errorf("truncated blob: err %v", err)
	}
	os.Remove(path)
	if _, err := newServer(f.layout, io.Discard); err == nil || !strings.Contains(err.Error(), ly.Digest) {
		t.Errorf("missing blob: err %v", err)
	}
	for _, ref := range []string{"ubuntu:24.04", "library/ubuntu:24.04", "docker.io/library/ubuntu"} {
		if _, _, _, err := splitRef(ref); err == nil {
			t.Errorf("splitRef(%q): no error, want one (not a full reference)", ref)
		}
	}
	host, name, tag, err := splitRef("127.0.0.1:5000/a/b:c")
	if err != nil || host != "127.0.0.1:5000" || name != "a/b" || tag != "c" {
		t.Errorf("splitRef(127.0.0.1:5000/a/b:c) = %q %q %q %v", host, name, tag, err)
	}
}
