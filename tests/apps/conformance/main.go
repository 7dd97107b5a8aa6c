// Command conformance is the fiskgen conformance fixture: a fisk application whose
// commands, cheats and tags are named like the fixture tools, prompts and resources of
// the MCP conformance suite (@modelcontextprotocol/conformance), wherever a command-line
// program can honour them. Its generated server (tests/fixtures/conformance.yaml) runs
// the suite in both requirement sets; what a command-line program cannot produce
// (images, audio, sampling, roots, ...) is listed with its reason in
// tests/clients/conformance-expected-failures.yml.
//
// Every command prints plain text on stdout; failing_job and test_error_handling exit
// with status 1 (a tool error: exit_code_is_error is on in tests/fixtures/conformance.yaml).
package main

import (
	"fmt"
	"os"
	"time"

	"github.com/choria-io/fisk"
)

func main() {
	app := build()
	app.MustParseWithUsage(os.Args[1:])
}

func build() *fisk.Application {
	app := fisk.New("conformance", "MCP conformance fixture: commands named like the suite's fixture tools")
	app.Version("0.1.0")
	app.WithCheats("conformance")

	// Prompts (one per cheat) and cheat-sheet resources (test://<label>).
	app.Cheat("", "# What this application is for\nconformance test_simple_text")
	app.Cheat("test_simple_prompt", "# A simple prompt without arguments\nconformance test_simple_text")
	app.Cheat("test_prompt_with_arguments", "# A prompt with two arguments\nconformance greet <arg1> --punctuation <arg2>")
	app.Cheat("static-text", "# Static text\nThis is the content of the static text resource.")
	app.Cheat("watched-resource", "# A resource to subscribe to\nIt never changes while the server runs.")

	app.Command("test_simple_text", "Print a simple text response").Action(func(*fisk.ParseContext) error {
		fmt.Println("This is a simple text response for testing.")
		return nil
	})

	app.Command("test_reconnection", "Answer at once (the SSE polling scenario's tool)").Action(func(*fisk.ParseContext) error {
		fmt.Println("reconnected")
		return nil
	})

	app.Command("test_error_handling", "Always fail with an error message").Action(func(*fisk.ParseContext) error {
		fmt.Fprintln(os.Stderr, "This tool intentionally returns an error for testing")
		os.Exit(1)
		return nil
	})

	progress := app.Command("test_tool_with_progress", "Work for a few seconds, printing a line per step")
	steps := progress.Flag("steps", "How many steps").Default("4").Int()
	progress.Action(func(*fisk.ParseContext) error {
		for i := 1; i <= *steps; i++ {
			time.Sleep(900 * time.Millisecond)
			fmt.Printf("step %d of %d\n", i, *steps)
		}
		return nil
	})

	// The server sends each line a command prints as a log notification to a client that asked
	// for logs (logging/setLevel, or _meta logLevel in 2026-07-28), and none to one that did not.
	app.Command("test_logging_tool", "Print a few log lines").Action(func(*fisk.ParseContext) error {
		for _, line := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
			fmt.Println(line)
		}
		return nil
	})

	app.Command("test_tool_with_logging", "Print three log lines about 50ms apart").Action(func(*fisk.ParseContext) error {
		for i, line := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
			if i > 0 {
				time.Sleep(50 * time.Millisecond)
			}
			fmt.Println(line)
		}
		return nil
	})

	// Confirm-gated commands: the server asks the user (elicitation in 2025 sessions, an
	// input-required result in 2026-07-28) before running them.
	elicit := app.Command("test_elicitation", "Ask the user before answering").Tag("ai:confirm")
	message := elicit.Flag("message", "The message to show the user").Required().String()
	elicit.Action(func(*fisk.ParseContext) error {
		fmt.Printf("User response: approved (%s)\n", *message)
		return nil
	})
	gated := map[string]string{
		"test_streaming_elicitation":                "streamed nothing: the approval came first",
		"test_input_required_result_request_state":  "state-ok: the approval state was verified",
		"test_input_required_result_tampered_state": "the approval state was verified",
	}
	for _, name := range []string{
		"test_streaming_elicitation",
		"test_input_required_result_request_state",
		"test_input_required_result_tampered_state",
	} {
		text := gated[name]
		app.Command(name, "Run after the user approves").Tag("ai:confirm").Action(func(*fisk.ParseContext) error {
			fmt.Println(text)
			return nil
		})
	}

	// Commands whose parameters the user answers (expose.agent.mcp.ask in
	// tests/fixtures/conformance.yaml): the server asks for them before the command runs.
	hello := app.Command("test_input_required_result_elicitation", "Greet the user by the name they give")
	helloName := hello.Flag("name", "Your name").Required().String()
	hello.Action(func(*fisk.ParseContext) error {
		fmt.Printf("Hello, %s!\n", *helloName)
		return nil
	})

	rounds := app.Command("test_input_required_result_multi_round", "Ask for a name, then a colour")
	roundName := rounds.Flag("name", "Your name").Required().String()
	roundColor := rounds.Flag("color", "Your favourite colour").Required().String()
	rounds.Action(func(*fisk.ParseContext) error {
		fmt.Printf("Hello, %s! Your favourite colour is %s.\n", *roundName, *roundColor)
		return nil
	})

	defaults := app.Command("test_elicitation_sep1034_defaults", "Ask for a profile whose fields have defaults")
	profileName := defaults.Flag("name", "Your name").Default("John Doe").String()
	profileAge := defaults.Flag("age", "Your age").Default("30").Int()
	profileScore := defaults.Flag("score", "Your score").Default("95.5").Float64()
	profileStatus := defaults.Flag("status", "Your status").Default("active").Enum("active", "inactive", "pending")
	profileVerified := defaults.Flag("verified", "Whether you are verified").Default("true").Bool()
	defaults.Action(func(*fisk.ParseContext) error {
		fmt.Printf("Elicitation completed: action=accept, content={name: %s, age: %d, score: %g, status: %s, verified: %t}\n",
			*profileName, *profileAge, *profileScore, *profileStatus, *profileVerified)
		return nil
	})

	multi := app.Command("multi_input", "Ask two questions at once, then answer")
	multiName := multi.Flag("name", "A name").Required().String()
	multiConfirm := multi.Flag("confirm", "Whether to go ahead").Bool()
	multi.Action(func(*fisk.ParseContext) error {
		fmt.Printf("multi_input: name=%s confirm=%t\n", *multiName, *multiConfirm)
		return nil
	})

	// Asked and gated: the server asks for the name first, then for approval of the command
	// line that carries it.
	greeting := app.Command("confirm_greeting", "Greet the user by name, after they approve").Tag("ai:confirm")
	greetingName := greeting.Flag("name", "Your name").Required().String()
	greeting.Action(func(*fisk.ParseContext) error {
		fmt.Printf("Hello, %s! (approved)\n", *greetingName)
		return nil
	})

	embedded := app.Command("test_prompt_with_embedded_resource", "Print the URI of a resource")
	embedded.Cheat("", "# Look at a resource\nconformance test_prompt_with_embedded_resource <resourceUri>")
	uri := embedded.Arg("resourceUri", "The resource's URI").Required().String()
	embedded.Action(func(*fisk.ParseContext) error {
		fmt.Println(*uri)
		return nil
	})

	// The tasks scenarios' tools.
	slow := app.Command("slow_compute", "Compute slowly: sleep, then print the label").Tag("impact:ro")
	slow.Cheat("", "# Compute for a while\nconformance slow_compute --seconds <seconds> --mode <mode> <label>")
	seconds := slow.Flag("seconds", "How long to compute, in seconds").Default("1").Float64()
	slow.Flag("mode", "How to compute").Default("fast").Enum("fast", "thorough")
	label := slow.Arg("label", "What to compute").Default("result").String()
	slow.Action(func(*fisk.ParseContext) error {
		time.Sleep(time.Duration(*seconds * float64(time.Second)))
		fmt.Printf("computed %s after %gs\n", *label, *seconds)
		return nil
	})

	greet := app.Command("greet", "Greet someone").Tag("impact:ro")
	name := greet.Arg("name", "Who to greet").Required().String()
	punctuation := greet.Flag("punctuation", "How to end the greeting").Default("!").String()
	greet.Action(func(*fisk.ParseContext) error {
		fmt.Printf("Hello, %s%s\n", *name, *punctuation)
		return nil
	})

	// failing_job works for about a second first, so that it becomes a task (tasks.after is
	// 500ms in tests/fixtures/conformance.yaml), as the tasks scenarios expect.
	app.Command("failing_job", "A job that always fails").Action(func(*fisk.ParseContext) error {
		time.Sleep(time.Second)
		fmt.Fprintln(os.Stderr, "failing_job: the job failed, as it always does")
		os.Exit(1)
		return nil
	})

	// test_tool_with_task runs only as a task (tasks.required in tests/fixtures/conformance.yaml):
	// its question is asked on the request, and the call that answers it is a task at once.
	withTask := app.Command("test_tool_with_task", "Ask for a name, then greet, as a task")
	withTaskName := withTask.Flag("name", "Your name").Required().String()
	withTask.Action(func(*fisk.ParseContext) error {
		fmt.Printf("Hello, %s!\n", *withTaskName)
		return nil
	})

	del := app.Command("confirm_delete", "Delete a file after the user confirms (prints only)").Tag("ai:confirm")
	filename := del.Arg("filename", "The file to delete").Required().String()
	del.Action(func(*fisk.ParseContext) error {
		fmt.Printf("deleted %s (nothing was actually deleted)\n", *filename)
		return nil
	})

	return app
}
