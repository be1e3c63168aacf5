package transform_test

import (
	"testing"

	jobsetflux "github.com/jobset-flux/jobset-flux"
	"github.com/jobset-flux/jobset-flux/pkg/transform"
)

func BenchmarkNew(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := transform.New(transform.Options{FunctionDefinition: jobsetflux.FunctionDefinition, Seed: []byte("0123456789abcdef0123456789abcdef")}); err != nil {
			b.Fatal(err)
		}
	}
}
