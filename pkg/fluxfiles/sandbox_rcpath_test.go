package fluxfiles

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSandboxShellRCPath: the job shell rc files a view links from
// prefixes other than flux-core's (flux-pmix's etc/flux/shell/lua.d, an
// mpi/ rc of another package) reach the broker's FLUX_SHELL_RC_PATH, one
// directory per prefix, after the image's own value; flux-core's own
// lua.d (which the shell always reads) is not added, and a view with
// nothing else leaves the variable alone. PATH and the rest stay the
// image's.
func TestSandboxShellRCPath(t *testing.T) {
	requireSandbox(t)
	const (
		pmixPrefix  = "/opt/software/linux-x86_64/flux-pmix-0.7.0-abc"
		otherPrefix = "/opt/software/linux-x86_64/mpi-rc-1.0-def"
		lua         = "etc/flux/shell/lua.d"
	)
	for _, tc := range []struct {
		name  string
		links map[string]string // view lua.d entry -> prefix it links into
		image string            // FLUX_SHELL_RC_PATH the image sets
		want  string            // FLUX_SHELL_RC_PATH flux start sees
	}{
		{"flux-core only", map[string]string{"openmpi.lua": fluxPrefix, "mpi/spectrum.lua": fluxPrefix}, "", "<unset>"},
		{"flux-pmix", map[string]string{"openmpi.lua": fluxPrefix, "pmix.lua": pmixPrefix}, "", pmixPrefix + "/" + lua},
		// In the order of the view's rc files: a.lua before pmix.lua.
		{"two prefixes, one listed once", map[string]string{"openmpi.lua": fluxPrefix, "pmix.lua": pmixPrefix, "a.lua": otherPrefix, "mpi/x.lua": otherPrefix},
			"", otherPrefix + "/" + lua + ":" + pmixPrefix + "/" + lua},
		{"after the image's", map[string]string{"pmix.lua": pmixPrefix}, "/site/lua.d", "/site/lua.d:" + pmixPrefix + "/" + lua},
		{"the image's kept", map[string]string{"openmpi.lua": fluxPrefix}, "/site/lua.d", "/site/lua.d"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPlan([]group{{"w", 1, 2, "js-w-0-[0-1]"}}, nil)
			pd := newPod(t, p, 0o444, 0)
			pd.installView()
			view := filepath.Join(pd.install, "view", lua)
			for entry, prefix := range tc.links {
				target := filepath.Join(prefix, lua, entry)
				file := filepath.Join(pd.software, strings.TrimPrefix(target, "/opt/software/"))
				if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
					t.Fatal(err)
				}
				writeFile(t, file, "-- rc\n", 0o644)
				if err := os.MkdirAll(filepath.Dir(filepath.Join(view, entry)), 0o755); err != nil {
					t.Fatal(err)
				}
				symlink(t, target, filepath.Join(view, entry))
			}
			var env []string
			if tc.image != "" {
				env = append(env, "FLUX_SHELL_RC_PATH="+tc.image)
			}
			r := pd.runAs("app", nil, append(rankEnv(0, 0), env...), "true")
			if r.code != 0 || r.start == nil {
				t.Fatalf("entrypoint exited %d:\n%s", r.code, r.stderr)
			}
			if got := r.start.env["FLUX_SHELL_RC_PATH"]; got != tc.want {
				t.Errorf("flux start saw FLUX_SHELL_RC_PATH=%q, want %q\n%s", got, tc.want, r.stderr)
			}
			checkEnvironment(t, r.start, false)
			added := strings.TrimPrefix(strings.TrimPrefix(tc.want, tc.image), ":")
			if added == "<unset>" || added == "" {
				if strings.Contains(r.stderr, "job shell rc files") {
					t.Errorf("log names rc files although the view adds none:\n%s", r.stderr)
				}
				return
			}
			checkLog(t, r.stderr, "jobset-flux: ", "job shell rc files: "+added)
		})
	}
}
