package workflowfile_test

import (
	"errors"
	"fmt"

	"github.com/weirflow/weir/workflowfile"
)

// A workflow file parsed into a plan: the tasks, their queues and the
// queues a worker must serve.
func ExampleParse() {
	src := `
id: photo-42
tasks:
  - name: fetch
    run: curl -fsS https://example.com/photo.jpg -o photo.jpg
  - name: thumb
    run: convert photo.jpg -resize 128 thumb.jpg
    after: [fetch]
    queue: cpu
    retries: 2
`
	f, err := workflowfile.Parse("photo.yaml", []byte(src), workflowfile.Options{Dir: "/srv/photos"})
	if err != nil {
		panic(err)
	}
	for _, t := range f.Plan.Tasks {
		fmt.Println(t.Name, t.Queue, t.After, t.MaxAttempts)
	}
	fmt.Println("queues:", f.Queues)
	// Output:
	// fetch default [] 1
	// thumb cpu [fetch] 3
	// queues: [default cpu]
}

// Every problem with a file is a *workflowfile.Error that says where it is.
func ExampleError() {
	src := `{"tasks": [{"name": "a", "run": "true"}, {"name": "b", "run": "true", "after": ["c"]}]}`
	_, err := workflowfile.Parse("flow.json", []byte(src), workflowfile.Options{})
	var fe *workflowfile.Error
	if errors.As(err, &fe) {
		fmt.Println(fe.Path)
		fmt.Println(fe.TaskName)
		fmt.Println(err)
	}
	// Output:
	// tasks[1].after
	// b
	// flow.json: task "b": field after: "c" is not a task listed before this one
}
