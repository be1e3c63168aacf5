package image

import (
	"archive/tar"
	"bytes"
	"context"
	"debug/buildinfo"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jobset-flux/jobset-flux/test/testsupport"
)

// dockerfileImage is the reference the Dockerfile's image is built under:
// local, never pushed, and apart from the image under test.
const dockerfileImage = "local/jobset-flux:dockerfile"

// dockerfileBuildTimeout bounds the Dockerfile build; a cold one imports
// the Go toolchain and compiles every dependency inside the engine.
const dockerfileBuildTimeout = 20 * time.Minute

// buildDockerfile builds the top-level Dockerfile into dockerfileImage with
// hack/image/dockerfile.sh: local stand-ins of its bases (the host's Go
// toolchain, the static base layer of the image under test), the modules
// vendored on the host, no network.
func buildDockerfile(t *testing.T, c config) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), dockerfileBuildTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "hack/image/dockerfile.sh", dockerfileImage)
	cmd.Dir = c.root
	cmd.Env = c.withEnv("IMAGE_OUT="+c.out, "VERSION="+c.version, "COMMIT="+c.commit)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("hack/image/dockerfile.sh: %v\n%s", err, out)
	}
	t.Logf("built %s from the Dockerfile in %s", dockerfileImage, time.Since(start).Round(time.Second))
}

// TestDockerfile: the top-level Dockerfile builds an image equivalent to
// `make image`'s: the same config (entrypoint, non-root user, environment,
// labels), the same files, a static binary that reports the release
// metadata passed as build args, and the same bytes out of every example
// as that image and as the exec binary.
func TestDockerfile(t *testing.T) {
	c := needImage(t)
	needTool(t, c.bin)
	needTool(t, c.kpt)
	buildDockerfile(t, c)

	t.Run("config", func(t *testing.T) {
		want, got := inspectImage(t, c.image), inspectImage(t, dockerfileImage)
		if u := got.Config.User; u == "" || u == "0" || strings.HasPrefix(u, "0:") || strings.HasPrefix(u, "root") {
			t.Errorf("USER %q: the image must not run as root", u)
		}
		for _, f := range []struct {
			name      string
			want, got any
		}{
			{"os", want.Os, got.Os},
			{"architecture", want.Architecture, got.Architecture},
			{"USER", want.Config.User, got.Config.User},
			{"ENTRYPOINT", want.Config.Entrypoint, got.Config.Entrypoint},
			{"CMD", want.Config.Cmd, got.Config.Cmd},
			{"ENV", want.Config.Env, got.Config.Env},
			{"labels", want.Config.Labels, got.Config.Labels},
		} {
			if !reflect.DeepEqual(f.got, f.want) {
				t.Errorf("%s: the Dockerfile's image has %q, make image's %q", f.name, f.got, f.want)
			}
		}
	})

	t.Run("files", func(t *testing.T) {
		want, got := exportFiles(t, c.image), exportFiles(t, dockerfileImage)
		if w, g := strings.Join(sortedNames(want), "\n"), strings.Join(sortedNames(got), "\n"); g != w {
			t.Fatalf("file list of the Dockerfile's image:\n%s\nmake image's:\n%s", g, w)
		}
		for name, w := range want {
			g := got[name]
			if g.hdr.Typeflag != w.hdr.Typeflag || g.hdr.Mode != w.hdr.Mode || g.hdr.Uid != w.hdr.Uid || g.hdr.Gid != w.hdr.Gid ||
				(g.hdr.Typeflag == tar.TypeSymlink && g.hdr.Linkname != w.hdr.Linkname) {
				t.Errorf("%s: type %c mode %o owner %d:%d in the Dockerfile's image, type %c mode %o owner %d:%d in make image's",
					name, g.hdr.Typeflag, g.hdr.Mode, g.hdr.Uid, g.hdr.Gid, w.hdr.Typeflag, w.hdr.Mode, w.hdr.Uid, w.hdr.Gid)
			}
			if !bytes.Equal(g.data, w.data) {
				t.Errorf("%s: the content differs", name)
			}
		}
	})

	t.Run("static", func(t *testing.T) {
		bin := copyFromImage(t, dockerfileImage, entrypoint)
		f, err := elf.Open(bin)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				t.Error("the binary names a dynamic loader (PT_INTERP): it is not static")
			}
		}
		if libs, err := f.ImportedLibraries(); err != nil || len(libs) != 0 {
			t.Errorf("the binary needs shared libraries %q (%v): it is not static", libs, err)
		}
		info, err := buildinfo.ReadFile(bin)
		if err != nil {
			t.Fatal(err)
		}
		settings := map[string]string{}
		for _, s := range info.Settings {
			settings[s.Key] = s.Value
		}
		for k, v := range map[string]string{"CGO_ENABLED": "0", "-trimpath": "true"} {
			if settings[k] != v {
				t.Errorf("build setting %s = %q, want %q", k, settings[k], v)
			}
		}
	})

	t.Run("version", func(t *testing.T) {
		args := []string{"run", "--rm", "--network", "none", "--read-only", "--cap-drop", "ALL"}
		want := string(run(t, "", nil, "docker", append(args, c.image, "version")...))
		got := string(run(t, "", nil, "docker", append(args, dockerfileImage, "version")...))
		first, _, _ := strings.Cut(got, "\n")
		if w := "jobset-flux " + c.version + " (commit " + c.commit + ")"; first != w {
			t.Errorf("version prints %q, want %q (the VERSION and COMMIT build args)", first, w)
		}
		if got != want {
			t.Errorf("version output differs from make image's: %s", testsupport.FirstDifference(got, want))
		}
	})

	t.Run("render", func(t *testing.T) {
		env := c.withEnv(seedEnv + "=" + c.seed)
		for _, ex := range examples(t, "Kptfile", "flux.yaml") {
			t.Run(ex.name, func(t *testing.T) {
				dir := copyPackage(t, ex.dir, ex.name)
				input := run(t, "", env, c.kpt, "fn", "source", dir, "--fn-config", filepath.Join(dir, "flux.yaml"))
				want := render(t, env, input, c.bin)
				if cm := []byte("kind: ConfigMap"); bytes.Count(want, cm) <= bytes.Count(input, cm) {
					t.Fatalf("the exec binary generated no ConfigMap: the comparison would prove nothing:\n%s", want)
				}
				dockerRun := []string{"docker", "run", "--rm", "-i", "--network", "none", "-e", seedEnv}
				for _, ref := range []string{c.image, dockerfileImage} {
					if got := render(t, env, input, append(dockerRun, ref)...); !bytes.Equal(got, want) {
						t.Errorf("%s renders other bytes than the exec binary: %s", ref, testsupport.FirstDifference(string(got), string(want)))
					}
				}
			})
		}
	})
}

// render runs a KRM function command on a ResourceList and returns its
// output.
func render(t *testing.T, env []string, input []byte, command ...string) []byte {
	t.Helper()
	out, err := output(t.Context(), "", env, input, command[0], command[1:]...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// copyFromImage copies one file out of an image (docker create + docker
// cp) and returns its path.
func copyFromImage(t *testing.T, ref, path string) string {
	t.Helper()
	id := strings.TrimSpace(string(run(t, "", nil, "docker", "create", ref)))
	defer func() {
		if out, err := exec.Command("docker", "rm", "-f", id).CombinedOutput(); err != nil {
			t.Errorf("docker rm -f %s: %v\n%s", id, err, out)
		}
	}()
	dst := filepath.Join(t.TempDir(), filepath.Base(path))
	run(t, "", nil, "docker", "cp", id+":"+path, dst)
	if _, err := os.Stat(dst); err != nil {
		t.Fatal(err)
	}
	return dst
}
