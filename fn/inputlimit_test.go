package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 19, class 8: stdin is read up to a documented limit, like the
// input files, and the error names the limit and how to raise it.
func TestStdinLimit(t *testing.T) {
	small := listHeader + "items:\n" + indentItem(goodJobSet)
	big := small + strings.Repeat("# padding\n", 200)
	dir := t.TempDir()
	bigFile := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(bigFile, []byte(big), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		env    string
		args   []string
		stdin  string
		exit   int
		phrase string
	}{
		{"stdin over the environment's limit", "1Ki", nil, big, exitUsage, "stdin is more than 1024 bytes; at most 1024 are read; raise it with --max-input or " + MaxInputEnv},
		{"stdin over the flag's limit", "", []string{"--max-input", "1Ki"}, big, exitUsage, "stdin is more than 1024 bytes"},
		{"the flag wins over the environment", "1Ki", []string{"--max-input", "1Mi"}, big, exitOK, ""},
		{"stdin under the limit", "1Ki", nil, small, exitOK, ""},
		{"file over the limit", "", []string{"--max-input", "1Ki", bigFile}, "", exitUsage, "at most 1024 are read; raise it with --max-input"},
		{"bad flag", "", []string{"--max-input", "lots"}, small, exitUsage, `--max-input: "lots" is not a size`},
		{"zero", "", []string{"--max-input", "0"}, small, exitUsage, "is not a size"},
		{"bad environment", "12 MB", nil, small, exitUsage, MaxInputEnv + `: "12 MB" is not a size`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(MaxInputEnv, tc.env)
			code, _, stderr := runFn(t, tc.args, tc.stdin)
			if code != tc.exit || !strings.Contains(stderr, tc.phrase) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, stderr, tc.exit, tc.phrase)
			}
		})
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"1": 1, "1Ki": 1 << 10, "256Mi": 256 << 20, "2Gi": 2 << 30, "1024Gi": 1 << 40} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "-1", "+5", " 5", "5 ", "1.5Gi", "1G", "1025Gi", "Mi", "99999999999999999999"} {
		if got, err := parseSize(in); err == nil {
			t.Errorf("parseSize(%q) = %d, want an error", in, got)
		}
	}
	t.Setenv(MaxInputEnv, "")
	if got, _ := inputLimit(""); got != 256<<20 {
		t.Errorf("the default limit is %d, README and docs/contributing/performance.md say 256Mi", got)
	}
}
