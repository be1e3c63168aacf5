package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jobset-flux/jobset-flux/pkg/jobsetrender"
	"github.com/kptdev/krm-functions-sdk/go/fn"
)

// modeInputs are the files and stdin texts of the mode tests: a plain
// YAML JobSet and the same JobSet in a ResourceList, a --config file and
// a key seed file (the test seed, so that every render gives the same
// keys).
type modeInputs struct {
	plain, list                       string
	plainFile, listFile, config, seed string
}

func newModeInputs(t *testing.T) modeInputs {
	t.Helper()
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	m := modeInputs{plain: goodJobSet, list: "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n" + indentItem(goodJobSet)}
	m.plainFile, m.listFile = write("plain.yaml", m.plain), write("list.yaml", m.list)
	m.config = write("config.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: flux}\ndata: {port: \"9000\"}\n")
	m.seed = write("seed", testSeed)
	return m
}

// What a run wrote on stdout.
const (
	outNone  = "nothing"
	outList  = "a ResourceList"
	outPlain = "plain YAML"
)

// outputKind says which of outNone, outList and outPlain out is.
func outputKind(t *testing.T, out string) string {
	t.Helper()
	switch {
	case out == "":
		return outNone
	case strings.HasPrefix(out, "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\n"):
		if _, err := fn.ParseResourceList([]byte(out)); err != nil {
			t.Fatalf("the output starts as a ResourceList but is not one: %v", err)
		}
		return outList
	}
	return outPlain
}

// TestModeTable: the command line and the kind of input on stdin decide
// the mode, as the README's "Without any of them" says. No argument:
// stdin is a ResourceList (kustomize and kpt send one), and plain YAML
// is refused unless --config, the one flag of plain YAML, says it is
// plain YAML; "-" is stdin given as a file; a file is rendered as what it
// holds. -v and --key-seed-file belong to every mode and change none.
func TestModeTable(t *testing.T) {
	m := newModeInputs(t)
	const plain, list, empty = "plain", "list", "nothing"
	for _, tc := range []struct {
		args  []string
		stdin string
		exit  int
		out   string
	}{
		{nil, list, exitOK, outList},
		{nil, plain, exitFailed, outNone},
		{[]string{"-v"}, list, exitOK, outList},
		{[]string{"-v"}, plain, exitFailed, outNone},
		{[]string{"--key-seed-file", m.seed}, list, exitOK, outList},
		{[]string{"--key-seed-file", m.seed}, plain, exitFailed, outNone},
		{[]string{"-v", "--key-seed-file", m.seed}, plain, exitFailed, outNone},
		{[]string{"--config", m.config}, list, exitUsage, outNone},
		{[]string{"--config", m.config}, plain, exitOK, outPlain},
		{[]string{"-v", "--config", m.config}, plain, exitOK, outPlain},
		{[]string{"-"}, list, exitOK, outList},
		{[]string{"-"}, plain, exitOK, outPlain},
		{[]string{"-v", "-"}, list, exitOK, outList},
		{[]string{"-v", "-"}, plain, exitOK, outPlain},
		{[]string{"--key-seed-file", m.seed, "-"}, plain, exitOK, outPlain},
		{[]string{"--config", m.config, "-"}, list, exitUsage, outNone},
		{[]string{"--config", m.config, "-"}, plain, exitOK, outPlain},
		{[]string{m.plainFile}, list, exitOK, outPlain},
		{[]string{"-v", m.plainFile}, empty, exitOK, outPlain},
		{[]string{m.listFile}, plain, exitOK, outList},
		{[]string{"-v", m.listFile}, empty, exitOK, outList},
		{[]string{"--config", m.config, m.plainFile}, empty, exitOK, outPlain},
		{[]string{"--config", m.config, m.listFile}, empty, exitUsage, outNone},
		{[]string{"-", m.plainFile}, plain, exitUsage, outNone},
		{[]string{m.plainFile, m.listFile}, empty, exitUsage, outNone},
		{[]string{"-", "--config", m.config}, plain, exitUsage, outNone},
		{[]string{"-", "-v"}, plain, exitUsage, outNone},
		{[]string{m.plainFile, "--key-seed-file", m.seed}, empty, exitUsage, outNone},
	} {
		name := strings.ReplaceAll(strings.Join(append(tc.args, "<", tc.stdin), " "), filepath.Dir(m.seed)+"/", "")
		t.Run(name, func(t *testing.T) {
			stdin := map[string]string{plain: m.plain, list: m.list, empty: ""}[tc.stdin]
			code, out, stderr := runFn(t, tc.args, stdin)
			if got := outputKind(t, out); code != tc.exit || got != tc.out {
				t.Errorf("exit %d and %s on stdout; want %d and %s\nstderr:\n%s", code, got, tc.exit, tc.out, stderr)
			}
		})
	}
}

// TestVerboseKeepsStdinMode: a flag that says nothing of the input (-v,
// --key-seed-file with the seed the environment gives) leaves a run on
// stdin as it is without it: plain YAML without "-" is refused with the
// same exit code and the same words, a ResourceList gives the same list.
// -v once made plain YAML on stdin render, and exit 0.
func TestVerboseKeepsStdinMode(t *testing.T) {
	m := newModeInputs(t)
	for _, flags := range [][]string{{"-v"}, {"--key-seed-file", m.seed}, {"-v", "--key-seed-file", m.seed}} {
		t.Run(strings.Join(flags, " ")+" < plain", func(t *testing.T) {
			code, out, stderr := runFn(t, nil, m.plain)
			fcode, fout, fstderr := runFn(t, flags, m.plain)
			if fcode != code || fout != out || fstderr != stderr {
				t.Errorf("with %v: exit %d, %d bytes out, stderr %q\nwithout: exit %d, %d bytes out, stderr %q", flags, fcode, len(fout), fstderr, code, len(out), stderr)
			}
		})
		t.Run(strings.Join(flags, " ")+" < list", func(t *testing.T) {
			code, out, _ := runFn(t, nil, m.list)
			fcode, fout, _ := runFn(t, flags, m.list)
			if fcode != code || fout != out {
				t.Errorf("with %v: exit %d, %d bytes out; without: exit %d, %d bytes out", flags, fcode, len(fout), code, len(out))
			}
		})
	}
}

// TestFlagAfterInput: Go's flag parsing stops at the first argument
// that is not a flag, "-" included, so a flag written after the inputs
// would be read as an input file. The usage error says that flags come
// before "-" and the files, and names the flag: every flag, in every
// spelling, after "-", a file or several (class 7: -h, -help, --help
// and --version were taken for files and got a message about inputs).
func TestFlagAfterInput(t *testing.T) {
	m := newModeInputs(t)
	for _, c := range []struct {
		args []string
		flag string
	}{
		{[]string{"-", "--config", m.config}, "--config"},
		{[]string{"-", "-config=" + m.config}, "-config=" + m.config},
		{[]string{"-", "-v"}, "-v"},
		{[]string{"-", "--v=false"}, "--v=false"},
		{[]string{"-", "--max-input=1Mi"}, "--max-input=1Mi"},
		{[]string{"-", "-max-input", "1Mi"}, "-max-input"},
		{[]string{"-", "--key-seed-file=" + m.seed}, "--key-seed-file=" + m.seed},
		{[]string{m.plainFile, "--key-seed-file", m.seed}, "--key-seed-file"},
		{[]string{m.plainFile, "-v"}, "-v"},
		{[]string{m.plainFile, "--config", m.config}, "--config"},
		{[]string{m.plainFile, "--max-input=1Mi"}, "--max-input=1Mi"},
		{[]string{m.plainFile, m.listFile, "-v"}, "-v"},
		{[]string{"-", "-h"}, "-h"},
		{[]string{"-", "-help"}, "-help"},
		{[]string{m.plainFile, "--help"}, "--help"},
		{[]string{"-", "--version"}, "--version"},
	} {
		code, out, stderr := runFn(t, c.args, m.plain)
		if code != exitUsage || out != "" || !strings.Contains(stderr, "flags go before") || !strings.Contains(stderr, c.flag+" is after an input") {
			t.Errorf("%v: exit %d, stderr %q; want %d and that flags go before the inputs, naming %s", c.args, code, stderr, exitUsage, c.flag)
		}
	}
}

// TestFlagNamedFileAfterDoubleDash: "--" ends the flags on purpose, so a
// file named like a flag after it is rendered, not refused as a flag
// after an input.
func TestFlagNamedFileAfterDoubleDash(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "-v"), []byte(goodJobSet), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	code, out, stderr := runFn(t, []string{"--", "-v"}, "")
	if code != exitOK || !strings.Contains(out, "flux-installer") {
		t.Errorf("jobset-flux -- -v: exit %d, stderr %q; want the file -v rendered", code, stderr)
	}
}

// TestFlagsKeepKRMMode: a ResourceList on stdin is answered as a
// ResourceList (its functionConfig read, results written), whatever
// flags are given; --config, which is for plain YAML, is a usage error.
func TestFlagsKeepKRMMode(t *testing.T) {
	dir := t.TempDir()
	seedFile := filepath.Join(dir, "seed")
	if err := os.WriteFile(seedFile, []byte(testSeed), 0o600); err != nil {
		t.Fatal(err)
	}
	in := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n" + indentItem(goodJobSet) +
		functionConfig("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: flux}\ndata: {port: \"9000\"}\n")
	for _, args := range [][]string{nil, {"--key-seed-file", seedFile}, {"-v"}, {"-v", "--key-seed-file", seedFile}} {
		t.Run(strings.Join(append([]string{"args"}, args...), " "), func(t *testing.T) {
			os.Unsetenv(jobsetrender.SeedEnv)
			code, out, stderr := runWithin(t, 30*time.Second, args, in)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			rl, err := fn.ParseResourceList([]byte(out))
			if err != nil {
				t.Fatalf("the output is not a ResourceList: %v\n%s", err, out)
			}
			var cm *fn.KubeObject
			for _, it := range rl.Items {
				if it.GetKind() == "ConfigMap" && it.GetName() == "good-flux-entrypoint" {
					cm = it
				}
			}
			if cm == nil || !strings.Contains(cm.String(), "9000") {
				t.Errorf("the functionConfig (port 9000) was not applied:\n%s", out)
			}
			if len(rl.Results) == 0 {
				t.Errorf("no results")
			}
		})
	}
	t.Run("--config with a ResourceList", func(t *testing.T) {
		cfg := filepath.Join(dir, "cfg.yaml")
		if err := os.WriteFile(cfg, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: f}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		code, out, stderr := runWithin(t, 30*time.Second, []string{"--config", cfg}, in)
		if code != exitUsage || out != "" || !strings.Contains(stderr, "carries its own functionConfig") {
			t.Errorf("exit %d, stderr %q, %d bytes out; want a usage error", code, stderr, len(out))
		}
	})
}
