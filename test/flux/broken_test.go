package flux

import (
	"strings"
	"testing"
	"time"

	"github.com/jobset-flux/jobset-flux/test/flux/internal/kubelet"
)

// TestBrokenRendersFail proves the runtime tests can fail: each case breaks
// one thing in a correct render, the way a bug in the function would, and
// the same checks TestArgv makes must then fail.
func TestBrokenRendersFail(t *testing.T) {
	t.Parallel()
	requireEnv(t)
	cases := []struct {
		name       string
		file, from string // in the generated ConfigMap
		to         string
	}{
		// No broker finds its own hostname in the hosts list.
		{"wrong host in broker.toml", "broker.toml", "host = 'argv-w-0-[0-1]'", "host = 'argv-x-0-[0-1]'"},
		// The broker refuses a certificate others can read.
		{"certificate readable by the group", "entrypoint.sh", `chmod 0400 -- "${cert}"`, `chmod 0440 -- "${cert}"`},
		// Re-joined words: the shell splits and globs them.
		{"mangled argv", "entrypoint.sh", `-- "$@"`, `-- $*`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := startArgv(t, func(objs *kubelet.Objects) {
				for _, cm := range objs.ConfigMaps {
					if text, ok := cm.Data[tc.file]; ok {
						if !strings.Contains(text, tc.from) {
							t.Fatalf("%s has no %q: update the test", tc.file, tc.from)
						}
						cm.Data[tc.file] = strings.Replace(text, tc.from, tc.to, 1)
					}
				}
			})
			res, err := r.tryWait(45 * time.Second)
			if n := argvIntact(r); n == 2 && res.State == "Completed" && err == nil {
				t.Errorf("the broken render passed the checks: the runtime tests cannot see this defect")
			} else {
				t.Logf("as it should, the broken render failed: %d of 2 tasks intact, JobSet %s, %v", n, res.State, err)
			}
		})
	}
}
