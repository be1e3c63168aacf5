package main

import (
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/jobset-flux/jobset-flux/pkg/curve"
	"github.com/jobset-flux/jobset-flux/pkg/plan"
	"k8s.io/apimachinery/pkg/util/validation"
)

// keygen writes a new CURVE certificate, or a Secret manifest holding one,
// for users who keep keys in SOPS, sealed secrets or an external store.
func keygen(args []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("jobset-flux keygen", flag.ContinueOnError)
	flags.SetOutput(stderr)
	name := flags.String("name", "jobset-flux", "metadata name written in the certificate")
	secretName := flags.String("secret", "", "write a Secret manifest of this name (e.g. <jobset>"+plan.SecretSuffix+") instead of the bare certificate")
	namespace := flags.String("namespace", "", "namespace of the Secret manifest")
	output := flags.String("o", "", "write to this file (mode 0600, replacing an existing regular file; anything else is refused) instead of stdout")
	if err := flags.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if flags.NArg() > 0 {
		fmt.Fprintf(stderr, "jobset-flux keygen: unexpected arguments %q\n", flags.Args())
		return exitUsage
	}
	// A Secret's name is a DNS-1123 subdomain, a namespace's a DNS-1123
	// label (no dots, at most 63 characters): the API server refuses
	// anything else, so a manifest with it would fail only at apply time.
	for _, check := range []struct {
		flag, value string
		valid       func(string) []string
	}{{"--secret", *secretName, validation.IsDNS1123Subdomain}, {"--namespace", *namespace, validation.IsDNS1123Label}} {
		if errs := check.valid(check.value); check.value != "" && len(errs) > 0 {
			fmt.Fprintf(stderr, "jobset-flux keygen: %s %q is not a valid name: %s\n", check.flag, check.value, errs[0])
			return exitUsage
		}
	}
	keys, err := curve.Generate(rand.Reader)
	if err != nil {
		fmt.Fprintf(stderr, "jobset-flux keygen: %v\n", err)
		return exitProblem
	}
	cert, err := keys.Certificate(*name)
	if err != nil {
		fmt.Fprintf(stderr, "jobset-flux keygen: --name: %v\n", err)
		return exitUsage
	}
	out := cert
	if *secretName != "" {
		out = curve.SecretManifest(*secretName, *namespace, plan.CertKey, cert)
	}
	if *output == "" {
		_, err = stdout.Write(out)
	} else {
		err = writePrivate(*output, out)
	}
	if err != nil {
		fmt.Fprintf(stderr, "jobset-flux keygen: %v\n", err)
		return exitProblem
	}
	return exitOK
}

// writePrivate writes data to name so that the file ends with mode 0600
// whether or not it existed: os.WriteFile keeps an existing file's mode,
// so a key written over a 0644 file would be readable by everyone. The
// data goes to a new 0600 file in the same directory, which then replaces
// name; a reader never sees a half-written key. Only a regular file is
// replaced: a symlink, device, FIFO, socket or directory at name is
// refused, neither followed nor replaced (as root, -o /dev/null would
// otherwise turn the device into a file holding the key).
func writePrivate(name string, data []byte) error {
	if info, err := os.Lstat(name); err == nil && !info.Mode().IsRegular() {
		return fmt.Errorf("-o %s is %s, not a regular file; give the path of a regular file (replaced) or of a new one", name, describeMode(info.Mode()))
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("-o %s: %w", name, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".*")
	if err != nil {
		return fmt.Errorf("-o %s: %w", name, err)
	}
	defer os.Remove(tmp.Name()) // after a successful rename: nothing there
	// CreateTemp makes the file 0600 already; a umask cannot widen it, but
	// say so where it matters.
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("-o %s: %w", name, err)
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("-o %s: %w", name, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("-o %s: %w", name, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("-o %s: %w", name, err)
	}
	if err := os.Rename(tmp.Name(), name); err != nil {
		return fmt.Errorf("-o %s: %w", name, err)
	}
	return nil
}

// describeMode names a file type that is not a regular file.
func describeMode(m os.FileMode) string {
	switch {
	case m&os.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsDir():
		return "a directory"
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a block device"
	case m&os.ModeNamedPipe != 0:
		return "a FIFO"
	case m&os.ModeSocket != 0:
		return "a socket"
	}
	return "not a regular file"
}
