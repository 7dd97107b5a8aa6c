// Command oldfisk is built with fisk v0.8.1, whose --fisk-introspect output
// has no precomputed schemas; fiskgen must refuse it as too old.
package main

import (
	"fmt"
	"os"

	"github.com/choria-io/fisk"
)

func main() {
	app := fisk.New("oldfisk", "An application built with fisk v0.8.1")
	app.Version("0.8.1")

	hello := app.Command("hello", "Say hello").Tag("impact:ro")
	name := hello.Flag("name", "Who to greet").Default("world").String()
	hello.Action(func(*fisk.ParseContext) error {
		fmt.Printf("hello %s\n", *name)
		return nil
	})

	app.MustParseWithUsage(os.Args[1:])
}
