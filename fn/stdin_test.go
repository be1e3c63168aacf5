package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/jobset-flux/jobset-flux/pkg/jobsetrender"
	"github.com/kptdev/krm-functions-sdk/go/fn"
)

// "-" renders the plain YAML on stdin exactly as the same text in a
// file: the same stdout, stderr (but for the name of the input) and exit
// code, with and without --config and -v, on good and bad input.
func TestStdinPathIsAFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	port := write("port.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: f}\ndata: {port: \"9000\"}\n")
	typo := write("typo.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: f}\ndata: {prot: \"1\"}\n")
	refused := strings.Replace(badJobSet, "replicas: 2", "replicas: \"2\"", 1)
	for _, tc := range []struct {
		name  string
		flags []string
		input string
		exit  int
	}{
		{"good", nil, deployment + "---\n" + goodJobSet, exitOK},
		{"good with --config", []string{"--config", port}, goodJobSet, exitOK},
		{"good with -v", []string{"-v"}, goodJobSet, exitOK},
		{"refused JobSet", nil, goodJobSet + "---\n" + refused, exitFailed},
		{"malformed YAML", nil, "kind: [\n", exitFailed},
		{"bad config", []string{"--config", typo}, goodJobSet, exitFailed},
		{"missing config", []string{"--config", filepath.Join(dir, "nope.yaml")}, goodJobSet, exitUsage},
		{"empty", nil, "", exitOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := write(strings.ReplaceAll(tc.name, " ", "-")+".yaml", tc.input)
			fileCode, fileOut, fileErr := runFn(t, append(append([]string{}, tc.flags...), file), "")
			code, out, stderr := runFn(t, append(append([]string{}, tc.flags...), "-"), tc.input)
			if code != tc.exit || fileCode != tc.exit {
				t.Fatalf("exit %d on stdin, %d on the file; want %d\nstdin's stderr:\n%s", code, fileCode, tc.exit, stderr)
			}
			if out != fileOut {
				t.Errorf("stdout differs from the file's:\n--- stdin\n%s\n--- file\n%s", out, fileOut)
			}
			if want := strings.ReplaceAll(fileErr, file, "<stdin>"); stderr != want {
				t.Errorf("stderr differs from the file's:\n--- stdin\n%s\n--- file\n%s", stderr, want)
			}
			if tc.exit != exitOK && out != "" {
				t.Errorf("stdout is not empty on failure:\n%s", out)
			}
		})
	}
}

// The case: Helm pipes plain YAML with no flags at all. Without
// "-" stdin is a ResourceList (kustomize and kpt send one) and plain
// YAML is refused; with "-" it is rendered, and rendering the output
// again changes nothing.
func TestStdinPathPlainYAML(t *testing.T) {
	code, _, stderr := runFn(t, nil, goodJobSet)
	if code != exitFailed || !strings.Contains(stderr, "not a ResourceList") {
		t.Fatalf("without -: exit %d, stderr %q; want the ResourceList error", code, stderr)
	}
	code, out, stderr := runFn(t, []string{"-"}, goodJobSet)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"kind: JobSet", "name: good-flux-entrypoint", "name: good-flux-curve", "flux-installer"} {
		if !strings.Contains(out, want) {
			t.Errorf("the output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "kind: ResourceList") {
		t.Errorf("the output is a ResourceList, want plain YAML:\n%s", out)
	}
	code, again, stderr := runFn(t, []string{"-"}, out)
	if code != exitOK || again != out {
		t.Errorf("a second render (exit %d, %s) changed the output:\n--- first\n%s\n--- second\n%s", code, stderr, out, again)
	}
}

// The key seed reaches a render of stdin as it does a file's: the same
// seed from --key-seed-file, JOBSET_FLUX_KEY_SEED_FILE or
// JOBSET_FLUX_KEY_SEED gives the same Secret, another seed another one.
func TestStdinPathSeed(t *testing.T) {
	dir := t.TempDir()
	seedFile := filepath.Join(dir, "seed")
	if err := os.WriteFile(seedFile, []byte(testSeed+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other")
	if err := os.WriteFile(other, []byte("another-seed-of-enough-bytes-0123456789"), 0o600); err != nil {
		t.Fatal(err)
	}
	render := func(env map[string]string, args ...string) string {
		t.Helper()
		os.Unsetenv(jobsetrender.SeedEnv)
		os.Unsetenv(jobsetrender.SeedFileEnv)
		for k, v := range env {
			t.Setenv(k, v)
		}
		code, out, stderr := runWithin(t, 30*time.Second, append(args, "-"), goodJobSet)
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		return out
	}
	t.Setenv(jobsetrender.SeedEnv, "")
	t.Setenv(jobsetrender.SeedFileEnv, "")
	byFlag := render(nil, "--key-seed-file", seedFile)
	if byEnvFile := render(map[string]string{jobsetrender.SeedFileEnv: seedFile}); byEnvFile != byFlag {
		t.Errorf("%s gives another render than --key-seed-file", jobsetrender.SeedFileEnv)
	}
	if byEnv := render(map[string]string{jobsetrender.SeedEnv: testSeed}); byEnv != byFlag {
		t.Errorf("%s gives another render than --key-seed-file", jobsetrender.SeedEnv)
	}
	if byOther := render(nil, "--key-seed-file", other); byOther == byFlag {
		t.Error("another seed gives the same render: the seed is not used")
	}
	os.Unsetenv(jobsetrender.SeedEnv)
	os.Unsetenv(jobsetrender.SeedFileEnv)
	code, _, stderr := runWithin(t, 30*time.Second, []string{"--key-seed-file", filepath.Join(dir, "nope"), "-"}, goodJobSet)
	if code != exitProblem || !strings.Contains(stderr, "reading the key seed") {
		t.Errorf("a missing seed file: exit %d, stderr %q; want %d and the seed's error", code, stderr, exitProblem)
	}
}

// "-" is the only input, and a ResourceList on it is answered as a
// ResourceList in a file is.
func TestStdinPathEdges(t *testing.T) {
	file := filepath.Join(t.TempDir(), "js.yaml")
	if err := os.WriteFile(file, []byte(goodJobSet), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"-", file}, {file, "-"}, {"-", "-"}} {
		code, out, stderr := runFn(t, args, goodJobSet)
		if code != exitUsage || out != "" || !strings.Contains(stderr, `"-" (stdin) must be the only input`) {
			t.Errorf("%v: exit %d, stderr %q; want a usage error", args, code, stderr)
		}
	}
	list := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n" + indentItem(goodJobSet) +
		functionConfig("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: flux}\ndata: {port: \"9000\"}\n")
	code, out, stderr := runFn(t, []string{"-"}, list)
	if code != exitOK {
		t.Fatalf("a ResourceList on -: exit %d: %s", code, stderr)
	}
	rl, err := fn.ParseResourceList([]byte(out))
	if err != nil || !strings.Contains(out, "9000") {
		t.Errorf("a ResourceList on - was not answered as one with its functionConfig (%v):\n%s", err, out)
	} else if len(rl.Results) == 0 {
		t.Error("a ResourceList on -: no results")
	}
}

// --help prints, on stdout and with exit 0 (kpt fn doc shows only
// that), the forms of the command, every flag, every setting of the
// settings table with its field, type and default, and an example; a
// usage error prints the forms and flags on stderr, not the settings.
func TestHelp(t *testing.T) {
	for _, arg := range []string{"--help", "-h", "-help"} {
		code, out, stderr := runFn(t, []string{arg}, "")
		if code != exitOK || stderr != "" {
			t.Fatalf("%s: exit %d, stderr %q", arg, code, stderr)
		}
		checkHelp(t, out)
	}
	code, out, stderr := runFn(t, []string{"--nope"}, "")
	if code != exitUsage || out != "" {
		t.Fatalf("--nope: exit %d, stdout %q", code, out)
	}
	for _, want := range []string{"flag provided but not defined: -nope", "Usage:", "-config", "jobset-flux --help"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("--nope: stderr lacks %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stderr, "Settings:") {
		t.Errorf("a usage error prints the whole help:\n%s", stderr)
	}
}

// stdin's read errors end a render of "-" as they end one of stdin
// without it: too large is a usage error that says how to raise the
// limit; a failed read is a problem of the function's.
func TestStdinPathReadErrors(t *testing.T) {
	code, out, stderr := runFn(t, []string{"--max-input", "64", "-"}, goodJobSet)
	if code != exitUsage || out != "" || !strings.Contains(stderr, "--max-input") {
		t.Errorf("over the limit: exit %d, stderr %q; want %d and how to raise it", code, stderr, exitUsage)
	}
	t.Setenv(jobsetrender.SeedEnv, testSeed)
	var outb, errb strings.Builder
	code = run([]string{"-"}, iotest.ErrReader(errors.New("disk on fire")), &outb, &errb)
	if code != exitProblem || outb.Len() != 0 || !strings.Contains(errb.String(), "disk on fire") {
		t.Errorf("a failed read: exit %d, stderr %q; want %d and the cause", code, errb.String(), exitProblem)
	}
}
