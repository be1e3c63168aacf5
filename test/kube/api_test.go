package kube

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// apiClient reads the API server directly over HTTPS with the
// kubeconfig's client certificate. The tests poll every 2 s in up to
// six namespaces at once; a kubectl process per poll costs about 0.3 s of
// CPU on these 2-core machines, which starved the pods under test. Only
// reads go through here: everything a user would do (apply, exec, logs)
// still goes through kubectl.
type apiClient struct {
	server string
	http   *http.Client
}

// kubeconfigFile is the part of a kubeconfig hack/kube/config.sh writes
// that the client needs: one cluster and one user, by file paths.
type kubeconfigFile struct {
	Clusters []struct {
		Cluster struct {
			Server               string `json:"server"`
			CertificateAuthority string `json:"certificate-authority"`
		} `json:"cluster"`
	} `json:"clusters"`
	Users []struct {
		User struct {
			ClientCertificate string `json:"client-certificate"`
			ClientKey         string `json:"client-key"`
		} `json:"user"`
	} `json:"users"`
}

// newAPIClient builds a client from a kubeconfig with one cluster and one
// user given by certificate files.
func newAPIClient(path string) (*apiClient, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read kubeconfig: %w", err)
	}
	var kc kubeconfigFile
	if err := yaml.Unmarshal(raw, &kc); err != nil {
		return nil, fmt.Errorf("parse kubeconfig %s: %w", path, err)
	}
	if len(kc.Clusters) != 1 || len(kc.Users) != 1 {
		return nil, fmt.Errorf("kubeconfig %s: want one cluster and one user, got %d and %d", path, len(kc.Clusters), len(kc.Users))
	}
	c, u := kc.Clusters[0].Cluster, kc.Users[0].User
	if c.Server == "" || c.CertificateAuthority == "" || u.ClientCertificate == "" || u.ClientKey == "" {
		return nil, fmt.Errorf("kubeconfig %s: want server, certificate-authority, client-certificate and client-key as files", path)
	}
	caPEM, err := os.ReadFile(c.CertificateAuthority)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig CA: %w", err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("kubeconfig CA %s: no certificate in it", c.CertificateAuthority)
	}
	cert, err := tls.LoadX509KeyPair(u.ClientCertificate, u.ClientKey)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig client certificate: %w", err)
	}
	transport := &http.Transport{
		TLSClientConfig:     &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
		MaxIdleConnsPerHost: 8,
		IdleConnTimeout:     time.Minute,
	}
	return &apiClient{server: strings.TrimSuffix(c.Server, "/"), http: &http.Client{Transport: transport, Timeout: 30 * time.Second}}, nil
}

// errNotFound is a 404 from the API server.
var errNotFound = errors.New("not found")

// get returns the body of a GET of path (for example /api/v1/pods); a
// status other than 200 is an error with the server's message.
func (a *apiClient) get(ctx context.Context, path string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.server+path, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := a.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("GET %s: read body: %w", path, err)
	}
	switch resp.StatusCode {
	case http.StatusOK:
		return body, nil
	case http.StatusNotFound:
		return nil, fmt.Errorf("GET %s: %w", path, errNotFound)
	default:
		return nil, fmt.Errorf("GET %s: %s: %s", path, resp.Status, lastLines(string(body), 3))
	}
}

// list GETs a collection and returns its items with kind set: the API
// server leaves kind out of a list's items (kubectl fills it in).
func (a *apiClient) list(ctx context.Context, path, kind string) ([]object, error) {
	body, err := a.get(ctx, path)
	if err != nil {
		return nil, err
	}
	var l struct {
		Items []object `json:"items"`
	}
	if err := json.Unmarshal(body, &l); err != nil {
		return nil, fmt.Errorf("decode %s: %w", path, err)
	}
	for i := range l.Items {
		l.Items[i].Kind = kind
	}
	return l.Items, nil
}
