package jobsetrender

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"

	"github.com/jobset-flux/jobset-flux/pkg/curve"
	"github.com/jobset-flux/jobset-flux/pkg/finding"
	"github.com/jobset-flux/jobset-flux/pkg/plan"
	"github.com/jobset-flux/jobset-flux/pkg/yamltree"
	"github.com/kptdev/krm-functions-sdk/go/fn"
)

// Renderer renders JobSets with one key policy: a seed, or a source of
// random keys. It keeps no state between JobSets.
type Renderer struct {
	seed   []byte
	random io.Reader
}

// New checks the seed (nil: none) and returns the renderer; random is
// the source of random keys (crypto/rand when nil).
func New(seed []byte, random io.Reader) (*Renderer, error) {
	if seed != nil {
		if err := checkSeed(seed); err != nil {
			return nil, err
		}
	}
	if random == nil {
		random = rand.Reader
	}
	return &Renderer{seed: seed, random: random}, nil
}

// certificate applies the key policy for one JobSet and returns the
// certificate to put in a new Secret, or nil when no Secret is generated:
//  1. curve-secret names an external Secret: use it, generate none;
//  2. a Secret of the generated name is already in the input (kpt writes
//     generated objects back into the package): keep it as it is;
//  3. a seed was supplied outside the package: derive the key from it and
//     the JobSet's namespace/name, so renders are reproducible;
//  4. otherwise: a random key, with a warning that renders then differ.
//
// A Secret that is kept is checked; its findings are returned separately
// because they belong to the Secret, not to the JobSet.
func (r *Renderer) certificate(pl *plan.Plan, existing *fn.KubeObject) (cert []byte, jobsetFound, secretFound finding.List) {
	if existing != nil {
		// The kept Secret is the one the seeded key went into, and it is
		// as shared as on the render that made it: the warning stays, so
		// a render of its own output reports what the first one did.
		r.warnNamespaceless(pl, &jobsetFound)
		secretFound = checkSecret(existing, pl.GenerateSecret)
		return nil, jobsetFound, secretFound
	}
	if !pl.GenerateSecret {
		jobsetFound.Infof("", "uses the existing Secret %q (key %s) for its CURVE certificate, which must exist in the JobSet's namespace", pl.SecretName, plan.CertKey)
		return nil, jobsetFound, nil
	}
	var keys curve.KeyPair
	var err error
	if r.seed != nil {
		keys, err = curve.Derive(r.seed, pl.Namespace+"/"+pl.Name)
		r.warnNamespaceless(pl, &jobsetFound)
	} else {
		keys, err = curve.Generate(r.random)
		jobsetFound.Warnf("", "generated a random CURVE key, so every render gives a different Secret (GitOps tools will show a diff each time); set %s (or %s) to a secret of at least %d bytes kept outside the package to make renders reproducible, or set flux-framework.org/curve-secret to a Secret you manage", SeedEnv, SeedFileEnv, curve.MinSeedLen)
	}
	if err == nil {
		cert, err = keys.Certificate(pl.Name)
	}
	if err != nil {
		jobsetFound.Errorf("", "cannot make the CURVE certificate: %v", err)
	}
	return cert, jobsetFound, nil
}

// warnNamespaceless warns about a seeded key of a JobSet without a
// namespace. The key is derived from namespace/name: without a namespace,
// the same overlay applied to two namespaces gives both instances one key,
// and either can join the other.
func (r *Renderer) warnNamespaceless(pl *plan.Plan, found *finding.List) {
	if r.seed == nil || pl.Namespace != "" {
		return
	}
	found.Warnf("metadata.namespace", "is not set, so the CURVE key is derived from the JobSet's name alone and every namespace this render is applied to shares it; set the namespace before jobset-flux runs (kustomize: namespace: in the kustomization that lists jobset-flux under transformers, whose builtin transformers run first) or set flux-framework.org/curve-secret")
}

// checkSecret validates a CURVE Secret found in the input: the one
// jobset-flux generated (generated), kept from an earlier render, or the
// one curve-secret names. The API server merges stringData over data, so
// the certificate the pods get is stringData's when both hold one: that
// is the one checked, and the two must agree (a valid data hid an
// invalid or foreign stringData). Each message names the Secret, the
// field and the fix for whose Secret it is (secretFix).
func checkSecret(s *fn.KubeObject, generated bool) finding.List {
	var found finding.List
	name := s.GetName()
	fix := secretFix(s, generated)
	dataField, plainField := yamltree.Key("data", plan.CertKey), yamltree.Key("stringData", plan.CertKey)
	value, inData, dataErr := s.NestedString("data", plan.CertKey)
	plain, inPlain, plainErr := s.NestedString("stringData", plan.CertKey)
	var fromData []byte
	switch {
	case dataErr != nil:
		found.Errorf(dataField, "is not a string: the CURVE Secret %q must hold the certificate base64-encoded under %s; %s", name, dataField, fix)
	case inData:
		var err error
		if fromData, err = base64.StdEncoding.DecodeString(value); err != nil {
			found.Errorf(dataField, "is not valid base64: the CURVE Secret %q must hold the certificate base64-encoded under %s; %s", name, dataField, fix)
		}
	}
	switch {
	case plainErr != nil:
		found.Errorf(plainField, "is not a string: the CURVE Secret %q may hold the certificate as text under %s; %s", name, plainField, fix)
	case inPlain && inData && dataErr == nil && fromData != nil && plain != string(fromData):
		found.Errorf(plainField, "differs from %s in the CURVE Secret %q; the API server lets stringData win, so the pods would get this one: keep the certificate in %s only", dataField, name, dataField)
	}
	if found.HasErrors() {
		return found
	}
	field, cert := dataField, fromData
	switch {
	case inPlain:
		field, cert = plainField, []byte(plain)
	case !inData:
		found.Errorf(dataField, "is missing: the CURVE Secret %q must hold the certificate base64-encoded under %s; %s", name, dataField, fix)
		return found
	}
	if _, _, err := curve.ParseCertificate(cert); err != nil {
		// The parser's message never quotes the certificate.
		found.Errorf(field, "is not a valid Flux CURVE certificate (%v) in the CURVE Secret %q; %s", err, name, fix)
	}
	return found
}

// secretFix is the fix for a CURVE Secret that holds no usable
// certificate. Deleting the Secret makes the next render generate a new
// one only when jobset-flux generates it: one named by curve-secret is
// the user's, never generated or replaced, so it must be filled, or
// curve-secret pointed elsewhere.
func secretFix(s *fn.KubeObject, generated bool) string {
	field := yamltree.Key("data", plan.CertKey)
	if generated {
		return fmt.Sprintf("put a valid certificate under %s, or delete the Secret %q from the input so that the next render generates a new one (with a new key, which every pod of the instance gets at once)", field, s.GetName())
	}
	keygen := "jobset-flux keygen --secret " + s.GetName()
	if ns := s.GetNamespace(); ns != "" {
		keygen += " --namespace " + ns
	}
	return fmt.Sprintf("the curve-secret setting (flux-framework.org/curve-secret, or the function config's) names this Secret, so jobset-flux never generates or replaces it: put a certificate under %s (`%s` writes a Secret holding a new one), or set curve-secret to a Secret that holds one", field, keygen)
}

// ErrSeedTooShort is returned for a seed below curve.MinSeedLen bytes.
var ErrSeedTooShort = fmt.Errorf("the key seed must hold at least %d bytes of secret material (make one with: head -c 32 /dev/urandom | base64)", curve.MinSeedLen)

// ErrSeedWeak is returned for a seed of enough bytes but too few
// different ones: all one byte (a file of zeros), white space only, a
// short pattern repeated.
var ErrSeedWeak = fmt.Errorf("the key seed is too uniform to be secret: it needs at least %d different bytes, not only white space (make one with: head -c 32 /dev/urandom | base64)", minSeedDistinct)

// minSeedDistinct is the fewest different bytes a seed may hold. It is a
// floor against accidents (an empty or zeroed file padded out, a
// placeholder), not an entropy estimate: 32 random bytes in base64 hold
// about 25 different characters, in hex about 16.
const minSeedDistinct = 8

// checkSeed refuses a seed that is too short or obviously not random.
// The messages never show the seed.
func checkSeed(seed []byte) error {
	if len(seed) < curve.MinSeedLen {
		return ErrSeedTooShort
	}
	if len(bytes.TrimSpace(seed)) == 0 {
		return ErrSeedWeak
	}
	var seen [256]bool
	distinct := 0
	for _, c := range seed {
		if !seen[c] {
			seen[c] = true
			distinct++
		}
	}
	if distinct < minSeedDistinct {
		return ErrSeedWeak
	}
	return nil
}

// Environment variables that supply the key seed, outside the package.
const (
	SeedEnv     = "JOBSET_FLUX_KEY_SEED"
	SeedFileEnv = "JOBSET_FLUX_KEY_SEED_FILE"
)
