package main

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

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

type fileSpec struct {
	mode int64
	data []byte
}

// tarLayer is a gzip layer of the given files (parent directories are
// left to the runtime).
func tarLayer(files map[string]fileSpec) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	var names []string
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		f := files[n]
		if err := tw.WriteHeader(&tar.Header{Name: n, Mode: f.mode, Size: int64(len(f.data)), Typeflag: tar.TypeReg}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil },
		tarball.WithMediaType(types.OCILayer))
}

func imageOf(t *testing.T, cfg v1.Config, layers ...v1.Layer) v1.Image {
	t.Helper()
	img, err := mutate.AppendLayers(mutate.MediaType(empty.Image, types.OCIManifestSchema1), layers...)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Config = "linux", "amd64", cfg
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		t.Fatal(err)
	}
	return img
}

// writeLayout writes the images into a new layout, named by reference as
// ocibuild names them, and returns its directory.
func writeLayout(t *testing.T, images map[string]v1.Image) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "oci")
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		t.Fatal(err)
	}
	for ref, img := range images {
		if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{refAnnotation: ref})); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// fixture is a layout with ubuntu on docker.io and on jobset-flux.test
// (one name on two hosts, different content) and one image on ghcr.io,
// served by a test server.
type fixture struct {
	dir    string
	srv    *httptest.Server
	log    *syncBuffer
	images map[string]v1.Image
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{log: &syncBuffer{}, images: map[string]v1.Image{}}
	for _, ref := range []string{"docker.io/library/ubuntu:24.04", "jobset-flux.test/library/ubuntu:24.04",
		"ghcr.io/converged-computing/metric-lammps:latest"} {
		l, err := tarLayer(map[string]fileSpec{"which": {0o644, []byte(ref + "\n")}})
		if err != nil {
			t.Fatal(err)
		}
		f.images[ref] = imageOf(t, v1.Config{Cmd: []string{"bash"}}, l)
	}
	f.dir = writeLayout(t, f.images)
	h, n, err := newRegistry(f.dir, log.New(f.log, "", 0))
	if err != nil || n != 3 {
		t.Fatalf("newRegistry: %d references, %v; want 3", n, err)
	}
	f.srv = httptest.NewServer(h)
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
	resp, err := http.DefaultClient.Do(req)
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

func digestOf(t *testing.T, img v1.Image) v1.Hash {
	t.Helper()
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestHostsApart: each image is in the repository host/path, by tag and
// by digest, with the headers a puller needs; the same name on two hosts
// gives each host's own image, and the name alone gives none.
func TestHostsApart(t *testing.T) {
	f := newFixture(t)
	for _, ref := range []string{"docker.io/library/ubuntu:24.04", "jobset-flux.test/library/ubuntu:24.04"} {
		repo, tag, _ := strings.Cut(ref, ":")
		want := digestOf(t, f.images[ref])
		for _, path := range []string{"/v2/" + repo + "/manifests/" + tag, "/v2/" + repo + "/manifests/" + want.String()} {
			resp, body := f.do(t, "GET", path)
			if got := sha(body); resp.StatusCode != 200 || got != want.String() ||
				resp.Header.Get("Docker-Content-Digest") != want.String() || resp.Header.Get("Content-Type") != string(types.OCIManifestSchema1) {
				t.Errorf("GET %s: %d, body digest %s, headers %v; want %s", path, resp.StatusCode, got, resp.Header, want)
			}
		}
	}
	if resp, _ := f.do(t, "GET", "/v2/library/ubuntu/manifests/24.04"); resp.StatusCode != 404 {
		t.Errorf("GET without the host prefix: %d, want 404", resp.StatusCode)
	}
}

// TestBlobs: a layer from the layout's files, whole, by HEAD and by range.
func TestBlobs(t *testing.T) {
	f := newFixture(t)
	layers, err := f.images["ghcr.io/converged-computing/metric-lammps:latest"].Layers()
	if err != nil {
		t.Fatal(err)
	}
	d, _ := layers[0].Digest()
	size, _ := layers[0].Size()
	path := "/v2/ghcr.io/converged-computing/metric-lammps/blobs/" + d.String()
	resp, body := f.do(t, "GET", path)
	if resp.StatusCode != 200 || sha(body) != d.String() || int64(len(body)) != size {
		t.Fatalf("GET %s: %d, %d bytes of digest %s", path, resp.StatusCode, len(body), sha(body))
	}
	if resp, _ := f.do(t, "HEAD", path); resp.StatusCode != 200 || resp.Header.Get("Content-Length") != itoa(size) {
		t.Errorf("HEAD %s: %d, Content-Length %q, want %d", path, resp.StatusCode, resp.Header.Get("Content-Length"), size)
	}
	if resp, part := f.do(t, "GET", path, "Range", "bytes=2-5"); resp.StatusCode != http.StatusPartialContent || !bytes.Equal(part, body[2:6]) {
		t.Errorf("GET %s bytes 2-5: %d %q, want 206 %q", path, resp.StatusCode, part, body[2:6])
	}
	missing := "/v2/ghcr.io/converged-computing/metric-lammps/blobs/sha256:" + strings.Repeat("0", 64)
	if resp, body := f.do(t, "GET", missing); resp.StatusCode != 404 || !strings.Contains(string(body), "BLOB_UNKNOWN") {
		t.Errorf("GET a missing blob: %d %s, want 404 BLOB_UNKNOWN", resp.StatusCode, body)
	}
}

// TestReadOnly: every method but GET and HEAD is refused, and nothing
// pushed appears.
func TestReadOnly(t *testing.T) {
	f := newFixture(t)
	for _, method := range []string{"PUT", "DELETE", "POST", "PATCH"} {
		resp, body := f.do(t, method, "/v2/ghcr.io/converged-computing/metric-lammps/manifests/other")
		var e struct{ Errors []struct{ Code string } }
		if resp.StatusCode != 405 || json.Unmarshal(body, &e) != nil || len(e.Errors) != 1 || e.Errors[0].Code != "UNSUPPORTED" {
			t.Errorf("%s: %d %s, want 405 UNSUPPORTED", method, resp.StatusCode, body)
		}
	}
	if resp, _ := f.do(t, "GET", "/v2/ghcr.io/converged-computing/metric-lammps/manifests/other"); resp.StatusCode != 404 {
		t.Errorf("a refused push left a manifest: %d", resp.StatusCode)
	}
}

// TestLog: one line per request with method and URI.
func TestLog(t *testing.T) {
	f := newFixture(t)
	f.do(t, "HEAD", "/v2/ghcr.io/converged-computing/metric-lammps/manifests/latest")
	f.do(t, "GET", "/v2/ghcr.io/converged-computing/metric-lammps/manifests/nope")
	for _, want := range []string{"HEAD /v2/ghcr.io/converged-computing/metric-lammps/manifests/latest\n",
		"GET /v2/ghcr.io/converged-computing/metric-lammps/manifests/nope 404 MANIFEST_UNKNOWN"} {
		if !strings.Contains(f.log.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, f.log.String())
		}
	}
}

// TestLoadChecks: a layout with a missing or truncated blob, or a
// manifest without a full reference, is refused at start, not served.
func TestLoadChecks(t *testing.T) {
	f := newFixture(t)
	layers, _ := f.images["docker.io/library/ubuntu:24.04"].Layers()
	d, _ := layers[0].Digest()
	path := filepath.Join(f.dir, "blobs", d.Algorithm, d.Hex)
	data, _ := os.ReadFile(path)
	if err := os.WriteFile(path, data[:len(data)-1], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := newRegistry(f.dir, log.New(io.Discard, "", 0)); err == nil || !strings.Contains(err.Error(), "the manifest says") {
		t.Errorf("truncated blob: err %v", err)
	}
	os.Remove(path)
	if _, _, err := newRegistry(f.dir, log.New(io.Discard, "", 0)); err == nil || !strings.Contains(err.Error(), d.String()) {
		t.Errorf("missing blob: err %v", err)
	}
	for _, ref := range []string{"ubuntu:24.04", "library/ubuntu:24.04", "docker.io/library/ubuntu", ""} {
		if _, _, err := splitRef(ref); err == nil {
			t.Errorf("splitRef(%q): no error, want one (not a full reference)", ref)
		}
	}
	for ref, want := range map[string][2]string{
		"127.0.0.1:5000/a/b:c":           {"127.0.0.1:5000/a/b", "c"},
		"docker.io/library/ubuntu:24.04": {"docker.io/library/ubuntu", "24.04"},
	} {
		if repo, tag, err := splitRef(ref); err != nil || repo != want[0] || tag != want[1] {
			t.Errorf("splitRef(%s) = %q %q %v, want %q %q", ref, repo, tag, err, want[0], want[1])
		}
	}
	empty := writeLayout(t, map[string]v1.Image{"library/ubuntu:24.04": f.images["docker.io/library/ubuntu:24.04"]})
	if _, _, err := newRegistry(empty, log.New(io.Discard, "", 0)); err == nil || !strings.Contains(err.Error(), "not a full reference") {
		t.Errorf("a short reference in index.json: err %v", err)
	}
}

func sha(b []byte) string {
	h, _, _ := v1.SHA256(bytes.NewReader(b))
	return h.String()
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
