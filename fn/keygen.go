package main

import (
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

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
	output := flags.String("o", "", "write to this file (created with mode 0600) instead of stdout")
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
	for _, check := range []struct{ flag, value string }{{"--secret", *secretName}, {"--namespace", *namespace}} {
		if errs := validation.IsDNS1123Subdomain(check.value); check.value != "" && len(errs) > 0 {
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
		err = os.WriteFile(*output, out, 0o600)
	}
	if err != nil {
		fmt.Fprintf(stderr, "jobset-flux keygen: %v\n", err)
		return exitProblem
	}
	return exitOK
}
