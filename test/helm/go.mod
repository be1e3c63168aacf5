module github.com/jobset-flux/jobset-flux/test/helm

go 1.26

require github.com/jobset-flux/jobset-flux/test/testsupport v0.0.0

require go.yaml.in/yaml/v3 v3.0.4

replace github.com/jobset-flux/jobset-flux/test/testsupport => ../testsupport
