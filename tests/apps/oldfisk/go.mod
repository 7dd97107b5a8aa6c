module fiskgen.example/tests/apps/oldfisk

go 1.26

require github.com/choria-io/fisk v0.8.1
