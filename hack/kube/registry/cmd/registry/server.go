package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/jobset-flux/jobset-flux/hack/kube/registry/oci"
)

// repository is one image name as clients ask for it: the reference
// without its registry host (library/ubuntu for docker.io/library/ubuntu).
type repository struct {
	host, name string
	tags       map[string]oci.Descriptor // tag -> manifest
	manifests  map[string]oci.Descriptor // digest -> manifest
	blobs      map[string]bool           // config and layer digests
}

// server answers the pull side of the registry HTTP API v2 from one OCI
// layout, read-only, for exactly the references index.json names.
type server struct {
	layout oci.Layout
	repos  map[string][]*repository // by name; one per host that has it
	refs   int

	logMu sync.Mutex
	log   io.Writer
}

// newServer indexes the layout: every manifest named by a full reference
// in index.json, and the blobs each manifest needs (which must be there).
func newServer(layout oci.Layout, log io.Writer) (*server, error) {
	idx, err := layout.ReadIndex()
	if err != nil {
		return nil, err
	}
	s := &server{layout: layout, repos: map[string][]*repository{}, log: log}
	for _, d := range idx.Manifests {
		ref := d.Annotations[oci.AnnotationRefName]
		host, name, tag, err := splitRef(ref)
		if err != nil {
			return nil, fmt.Errorf("index.json: %w", err)
		}
		if err := s.add(s.repo(host, name), tag, d); err != nil {
			return nil, fmt.Errorf("%s: %w", ref, err)
		}
		s.refs++
	}
	return s, nil
}

// splitRef splits a full reference host/name:tag (or host/name@digest).
func splitRef(ref string) (host, name, tag string, err error) {
	host, rest, ok := strings.Cut(ref, "/")
	if !ok || !strings.ContainsAny(host, ".:") && host != "localhost" {
		return "", "", "", fmt.Errorf("%q is not a full reference (host/name:tag)", ref)
	}
	if n, d, ok := strings.Cut(rest, "@"); ok {
		return host, n, d, nil
	}
	i := strings.LastIndex(rest, ":")
	if i < 0 || strings.Contains(rest[i:], "/") {
		return "", "", "", fmt.Errorf("%q has no tag", ref)
	}
	return host, rest[:i], rest[i+1:], nil
}

func (s *server) repo(host, name string) *repository {
	for _, r := range s.repos[name] {
		if r.host == host {
			return r
		}
	}
	r := &repository{host: host, name: name, tags: map[string]oci.Descriptor{},
		manifests: map[string]oci.Descriptor{}, blobs: map[string]bool{}}
	s.repos[name] = append(s.repos[name], r)
	return r
}

func (s *server) add(r *repository, tag string, d oci.Descriptor) error {
	if d.MediaType != oci.MediaTypeManifest {
		return fmt.Errorf("media type %s: only image manifests are served", d.MediaType)
	}
	if err := s.checkBlob(d); err != nil {
		return err
	}
	m, err := s.layout.ReadManifest(d)
	if err != nil {
		return err
	}
	for _, b := range append([]oci.Descriptor{m.Config}, m.Layers...) {
		if err := s.checkBlob(b); err != nil {
			return err
		}
		r.blobs[b.Digest] = true
	}
	if !strings.HasPrefix(tag, "sha256:") {
		r.tags[tag] = d
	}
	r.manifests[d.Digest] = d
	return nil
}

// checkBlob makes sure a blob is in the layout with its declared size.
func (s *server) checkBlob(d oci.Descriptor) error {
	path, err := s.layout.BlobPath(d.Digest)
	if err != nil {
		return err
	}
	info, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("blob %s: %w", d.Digest, err)
	}
	if info.Size() != d.Size {
		return fmt.Errorf("blob %s: %d bytes, descriptor says %d", d.Digest, info.Size(), d.Size)
	}
	return nil
}

// lookup finds a repository by name; ns (containerd's ?ns=<host> on
// mirror requests) picks the host when given and must then match.
func (s *server) lookup(name, ns string) (*repository, error) {
	rs := s.repos[name]
	if ns != "" {
		for _, r := range rs {
			if r.host == ns {
				return r, nil
			}
		}
		return nil, fmt.Errorf("no repository %s on %s here", name, ns)
	}
	switch len(rs) {
	case 0:
		return nil, fmt.Errorf("no repository %s here", name)
	case 1:
		return rs[0], nil
	}
	return nil, fmt.Errorf("repository %s is on several hosts here: ask with ?ns=<host>", name)
}

// ServeHTTP routes /v2/, /v2/<name>/manifests/<ref>, /v2/<name>/blobs/<digest>
// and /v2/<name>/tags/list.
func (s *server) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	w.Header().Set("Docker-Distribution-API-Version", "registry/2.0")
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		apiError(w, http.StatusMethodNotAllowed, "UNSUPPORTED", "this registry is read-only")
		return
	}
	path := req.URL.Path
	if path == "/v2/" || path == "/v2" {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, "{}")
		return
	}
	rest, ok := strings.CutPrefix(path, "/v2/")
	if !ok {
		apiError(w, http.StatusNotFound, "NAME_UNKNOWN", "not a registry API path")
		return
	}
	ns := req.URL.Query().Get("ns")
	if name, ok := strings.CutSuffix(rest, "/tags/list"); ok {
		s.tags(w, name, ns)
		return
	}
	for _, kind := range []string{"/manifests/", "/blobs/"} {
		if i := strings.LastIndex(rest, kind); i > 0 {
			s.content(w, req, rest[:i], kind, rest[i+len(kind):], ns)
			return
		}
	}
	apiError(w, http.StatusNotFound, "NAME_UNKNOWN", "not a registry API path")
}

func (s *server) content(w http.ResponseWriter, req *http.Request, name, kind, ref, ns string) {
	r, err := s.lookup(name, ns)
	if err != nil {
		apiError(w, http.StatusNotFound, "NAME_UNKNOWN", err.Error())
		return
	}
	var d oci.Descriptor
	if kind == "/manifests/" {
		var ok bool
		if d, ok = r.tags[ref]; !ok {
			d, ok = r.manifests[ref]
		}
		if !ok {
			apiError(w, http.StatusNotFound, "MANIFEST_UNKNOWN", fmt.Sprintf("no manifest %s in %s", ref, name))
			return
		}
	} else {
		if !r.blobs[ref] {
			apiError(w, http.StatusNotFound, "BLOB_UNKNOWN", fmt.Sprintf("no blob %s in %s", ref, name))
			return
		}
		d = oci.Descriptor{MediaType: "application/octet-stream", Digest: ref}
	}
	s.serveBlob(w, req, d)
}

// serveBlob sends a blob file; http.ServeContent answers HEAD, Range and
// If-None-Match and sets Content-Length.
func (s *server) serveBlob(w http.ResponseWriter, req *http.Request, d oci.Descriptor) {
	path, err := s.layout.BlobPath(d.Digest)
	if err != nil {
		apiError(w, http.StatusBadRequest, "DIGEST_INVALID", err.Error())
		return
	}
	f, err := os.Open(path)
	if err != nil {
		apiError(w, http.StatusInternalServerError, "UNKNOWN", "blob missing from the layout: "+d.Digest)
		return
	}
	defer f.Close()
	h := w.Header()
	h.Set("Content-Type", d.MediaType)
	h.Set("Docker-Content-Digest", d.Digest)
	h.Set("Etag", `"`+d.Digest+`"`)
	http.ServeContent(w, req, "", time.Time{}, f)
}

func (s *server) tags(w http.ResponseWriter, name, ns string) {
	r, err := s.lookup(name, ns)
	if err != nil {
		apiError(w, http.StatusNotFound, "NAME_UNKNOWN", err.Error())
		return
	}
	tags := make([]string, 0, len(r.tags))
	for t := range r.tags {
		tags = append(tags, t)
	}
	sort.Strings(tags)
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"name": name, "tags": tags})
}

// apiError writes the registry API's error body.
func apiError(w http.ResponseWriter, status int, code, message string) {
	body, _ := json.Marshal(map[string]any{"errors": []map[string]string{{"code": code, "message": message}}})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", fmt.Sprint(len(body)))
	w.WriteHeader(status)
	w.Write(body)
}

// logged wraps a handler with one log line per request: time, client,
// method, URI, status, bytes sent and duration.
func (s *server) logged(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		start := time.Now()
		rec := &recorder{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(rec, req)
		s.logMu.Lock()
		defer s.logMu.Unlock()
		fmt.Fprintf(s.log, "%s %s %s %s %d %d %s\n", start.UTC().Format(time.RFC3339Nano), req.RemoteAddr,
			req.Method, req.URL.RequestURI(), rec.status, rec.bytes, time.Since(start).Round(time.Microsecond))
	})
}

type recorder struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (r *recorder) WriteHeader(status int) {
	r.status = status
	r.ResponseWriter.WriteHeader(status)
}

func (r *recorder) Write(p []byte) (int, error) {
	n, err := r.ResponseWriter.Write(p)
	r.bytes += int64(n)
	return n, err
}

// ReadFrom keeps the sendfile path of the underlying writer for large
// blobs while counting the bytes.
func (r *recorder) ReadFrom(src io.Reader) (int64, error) {
	var n int64
	var err error
	if rf, ok := r.ResponseWriter.(io.ReaderFrom); ok {
		n, err = rf.ReadFrom(src)
	} else {
		n, err = io.Copy(struct{ io.Writer }{r.ResponseWriter}, src)
	}
	r.bytes += n
	return n, err
}
