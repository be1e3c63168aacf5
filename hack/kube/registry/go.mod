module github.com/jobset-flux/jobset-flux/hack/kube/registry

go 1.26.0

require github.com/jobset-flux/jobset-flux/test/testsupport v0.0.0

replace github.com/jobset-flux/jobset-flux/test/testsupport => ../../../test/testsupport
