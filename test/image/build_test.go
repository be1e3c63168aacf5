package image

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// layoutDigest is the manifest digest of the one image in an OCI layout
// and the reference index.json names it by.
func layoutDigest(t *testing.T, dir string) (digest, ref string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "index.json"))
	if err != nil {
		unavailable(t, "no image layout (make image writes it): %v", err)
	}
	var idx struct {
		Manifests []struct {
			Digest      string
			Annotations map[string]string
		}
	}
	if err := json.Unmarshal(data, &idx); err != nil || len(idx.Manifests) != 1 {
		t.Fatalf("%s/index.json: %v, %d manifests; want one", dir, err, len(idx.Manifests))
	}
	return idx.Manifests[0].Digest, idx.Manifests[0].Annotations["org.opencontainers.image.ref.name"]
}

// TestImageReproducible: hack/image/build.sh on the same sources and
// release metadata makes the image under test again, to the digest; a
// change of input (another COMMIT, in the binary and a label) gives
// another digest. Needs no engine.
func TestImageReproducible(t *testing.T) {
	c := getConfig(t)
	want, ref := layoutDigest(t, filepath.Join(c.out, "oci"))
	if ref != c.image {
		t.Errorf("the layout names its image %q, want %q", ref, c.image)
	}
	for _, tc := range []struct {
		commit string
		same   bool
	}{{c.commit, true}, {c.commit + "-changed", false}} {
		out := filepath.Join(t.TempDir(), "image")
		env := c.withEnv("IMAGE="+c.image, "VERSION="+c.version, "COMMIT="+tc.commit)
		run(t, c.root, env, "bash", "hack/image/build.sh", "function", out)
		got, _ := layoutDigest(t, filepath.Join(out, "oci"))
		switch {
		case tc.same && got != want:
			t.Errorf("rebuilt with the same inputs: %s, the image under test is %s", got, want)
		case !tc.same && got == want:
			t.Errorf("rebuilt with COMMIT %s: still %s", tc.commit, got)
		}
	}
}
