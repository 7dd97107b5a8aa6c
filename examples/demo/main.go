// Command tasks is a small tasks and notes tracker built with fisk. It is the
// demo application that fiskgen turns into an MCP server.
package main

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/choria-io/fisk"
)

// Task is one tracked task.
type Task struct {
	ID       int        `json:"id"`
	Title    string     `json:"title"`
	Priority string     `json:"priority"`
	Tags     []string   `json:"tags,omitempty"`
	Done     bool       `json:"done"`
	Created  time.Time  `json:"created"`
	Due      *time.Time `json:"due,omitempty"`
}

// Note is one free-text note.
type Note struct {
	ID      int       `json:"id"`
	Text    string    `json:"text"`
	Created time.Time `json:"created"`
}

// Store is the whole state, kept in one JSON file.
type Store struct {
	NextID int    `json:"next_id"`
	Tasks  []Task `json:"tasks"`
	Notes  []Note `json:"notes"`
}

var (
	storePath string
	trace     bool
)

func tracef(format string, a ...any) {
	if trace {
		fmt.Fprintf(os.Stderr, "trace: "+format+"\n", a...)
	}
}

func load() (*Store, error) {
	tracef("reading %s", storePath)
	st := &Store{NextID: 1}
	data, err := os.ReadFile(storePath)
	if errors.Is(err, os.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, st); err != nil {
		return nil, fmt.Errorf("%s: %w", storePath, err)
	}
	return st, nil
}

func (st *Store) save() error {
	tracef("writing %s", storePath)
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	tmp := storePath + ".tmp"
	if err := os.WriteFile(tmp, append(data, '\n'), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, storePath)
}

func (st *Store) task(id int) (*Task, error) {
	for i := range st.Tasks {
		if st.Tasks[i].ID == id {
			return &st.Tasks[i], nil
		}
	}
	return nil, fmt.Errorf("no task with id %d", id)
}

func (st *Store) nextID() int {
	id := st.NextID
	st.NextID++
	return id
}

func (t Task) status() string {
	if t.Done {
		return "done"
	}
	return "open"
}

func (t Task) line() string {
	s := fmt.Sprintf("#%d [%s] %s (%s)", t.ID, t.status(), t.Title, t.Priority)
	if t.Due != nil {
		s += " due " + t.Due.Format(time.RFC3339)
	}
	if len(t.Tags) > 0 {
		s += " tags: " + strings.Join(t.Tags, ", ")
	}
	return s
}

func main() {
	app := fisk.New("tasks", "Track tasks and notes in a local JSON file")
	app.Version(release)
	app.Author("fiskgen demo <demo@example.com>")
	app.Flag("store", "Path of the JSON store file").Envar("TASKS_STORE").Default("tasks.json").PlaceHolder("FILE").StringVar(&storePath)
	app.Flag("trace", "Log store reads and writes to stderr").UnNegatableBoolVar(&trace)

	task := app.Command("task", "Manage tasks")

	add := task.Command("add", "Add a task").Tag("impact:rw").
		HelpLong("Adds an open task and prints its id. --due is relative to now, for example 48h.")
	title := add.Arg("title", "What needs doing").Required().String()
	priorities := []string{"low", "normal", "high"}
	if upgraded {
		priorities = append(priorities, "urgent")
	}
	priority := add.Flag("priority", "Task priority").Default("normal").Enum(priorities...)
	due := add.Flag("due", "Due in this long from now").Duration()
	tags := add.Flag("tag", "A tag for the task, repeatable").Strings()
	add.Action(func(*fisk.ParseContext) error {
		return update(func(st *Store) (string, error) {
			t := Task{ID: st.nextID(), Title: *title, Priority: *priority, Tags: *tags, Created: time.Now().UTC().Truncate(time.Second)}
			if *due != 0 {
				d := t.Created.Add(*due)
				t.Due = &d
			}
			st.Tasks = append(st.Tasks, t)
			return fmt.Sprintf("Added task #%d: %s", t.ID, t.Title), nil
		})
	})

	list := task.Command("list", "List tasks").Alias("ls").Tag("ai:read_only", "impact:ro")
	status := list.Flag("status", "Which tasks to list").Default("open").Enum("open", "done", "all")
	asJSON := list.Flag("json", "Print the tasks as JSON").UnNegatableBool()
	list.Action(func(*fisk.ParseContext) error {
		st, err := load()
		if err != nil {
			return err
		}
		found := []Task{}
		for _, t := range st.Tasks {
			if *status == "all" || t.status() == *status {
				found = append(found, t)
			}
		}
		if *asJSON {
			return printJSON(found)
		}
		if len(found) == 0 {
			fmt.Printf("No %s tasks\n", *status)
		}
		for _, t := range found {
			fmt.Println(t.line())
		}
		return nil
	})

	show := task.Command("show", "Show one task").Tag("ai:read_only", "ai:idempotent", "impact:ro")
	showID := show.Arg("id", "Task id").Required().Int()
	show.Action(func(*fisk.ParseContext) error {
		st, err := load()
		if err != nil {
			return err
		}
		t, err := st.task(*showID)
		if err != nil {
			return err
		}
		fmt.Println(t.line())
		fmt.Printf("created %s\n", t.Created.Format(time.RFC3339))
		return nil
	})

	done := task.Command("done", "Mark a task as done").Tag("ai:idempotent", "impact:rw")
	doneID := done.Arg("id", "Task id").Required().Int()
	done.Action(func(*fisk.ParseContext) error {
		return update(func(st *Store) (string, error) {
			t, err := st.task(*doneID)
			if err != nil {
				return "", err
			}
			t.Done = true
			return fmt.Sprintf("Task #%d is done", t.ID), nil
		})
	})

	if upgraded {
		archive := task.Command("archive", "Remove every done task from the list").Tag("ai:idempotent", "impact:rw")
		archive.Action(func(*fisk.ParseContext) error {
			return update(func(st *Store) (string, error) {
				open := st.Tasks[:0]
				for _, t := range st.Tasks {
					if !t.Done {
						open = append(open, t)
					}
				}
				archived := len(st.Tasks) - len(open)
				st.Tasks = open
				return fmt.Sprintf("Archived %d done tasks", archived), nil
			})
		})
	}

	del := task.Command("delete", "Delete a task").Tag("ai:destructive", "ai:confirm", "impact:rw").
		HelpLong("Deletes a done task. Open tasks are only deleted with --force.")
	delID := del.Arg("id", "Task id").Required().Int()
	force := del.Flag("force", "Delete the task even if it is still open").UnNegatableBool()
	del.Action(func(*fisk.ParseContext) error {
		return update(func(st *Store) (string, error) {
			t, err := st.task(*delID)
			if err != nil {
				return "", err
			}
			if !t.Done && !*force {
				return "", fmt.Errorf("task #%d is still open, use --force to delete it", t.ID)
			}
			st.Tasks = slices.DeleteFunc(st.Tasks, func(x Task) bool { return x.ID == *delID })
			return fmt.Sprintf("Deleted task #%d", *delID), nil
		})
	})

	note := app.Command("note", "Keep notes")

	noteAdd := note.Command("add", "Add a note")
	text := noteAdd.Arg("text", "The note").Required().String()
	noteAdd.Action(func(*fisk.ParseContext) error {
		return update(func(st *Store) (string, error) {
			n := Note{ID: st.nextID(), Text: *text, Created: time.Now().UTC().Truncate(time.Second)}
			st.Notes = append(st.Notes, n)
			return fmt.Sprintf("Added note #%d", n.ID), nil
		})
	})

	if !upgraded {
		search := note.Command("search", "Search notes, case-insensitively").Tag("ai:read_only")
		query := search.Arg("query", "Text to look for").Required().String()
		limit := search.Flag("limit", "Show at most this many notes").Default("10").Int()
		search.Action(func(*fisk.ParseContext) error {
			st, err := load()
			if err != nil {
				return err
			}
			shown := 0
			for _, n := range st.Notes {
				if shown < *limit && strings.Contains(strings.ToLower(n.Text), strings.ToLower(*query)) {
					fmt.Printf("#%d %s\n", n.ID, n.Text)
					shown++
				}
			}
			fmt.Printf("%d matching notes shown\n", shown)
			return nil
		})
	}

	storeCmd := app.Command("store", "Manage the store file")

	purge := storeCmd.Command("purge", "Delete every task and note").Tag("ai:deny", "ai:destructive")
	purge.Action(func(*fisk.ParseContext) error {
		if err := (&Store{NextID: 1, Tasks: []Task{}, Notes: []Note{}}).save(); err != nil {
			return err
		}
		fmt.Printf("Purged %s\n", storePath)
		return nil
	})

	export := storeCmd.Command("export", "Print every task").Tag("ai:read_only")
	format := export.Flag("format", "Output format").Default("json").Enum("json", "csv")
	export.Action(func(*fisk.ParseContext) error {
		st, err := load()
		if err != nil {
			return err
		}
		if *format == "json" {
			return printJSON(st)
		}
		w := csv.NewWriter(os.Stdout)
		_ = w.Write([]string{"id", "title", "priority", "status", "tags"})
		for _, t := range st.Tasks {
			_ = w.Write([]string{strconv.Itoa(t.ID), t.Title, t.Priority, t.status(), strings.Join(t.Tags, ";")})
		}
		w.Flush()
		return w.Error()
	})

	app.MustParseWithUsage(os.Args[1:])
}

// update loads the store, applies change, saves, and only then prints the
// message change returned.
func update(change func(*Store) (string, error)) error {
	st, err := load()
	if err != nil {
		return err
	}
	msg, err := change(st)
	if err != nil {
		return err
	}
	if err := st.save(); err != nil {
		return err
	}
	fmt.Println(msg)
	return nil
}

func printJSON(v any) error {
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
