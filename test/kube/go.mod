module github.com/jobset-flux/jobset-flux/test/kube

go 1.26.0

require (
	github.com/jobset-flux/jobset-flux/test/testsupport v0.0.0
	sigs.k8s.io/yaml v1.6.0
)

require go.yaml.in/yaml/v2 v2.4.2 // indirect

replace github.com/jobset-flux/jobset-flux/test/testsupport => ../testsupport
