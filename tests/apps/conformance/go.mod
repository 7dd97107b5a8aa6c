module fiskgen.example/tests/apps/conformance

go 1.26

require github.com/choria-io/fisk v0.9.1
