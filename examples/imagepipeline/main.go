// Command imagepipeline runs an image pipeline as a weir workflow: fetch an
// image, resize it to three sizes in parallel, watermark the large one, and
// publish a manifest once every rendition is ready. Each task receives its
// dependencies' typed results.
//
//	go run ./examples/imagepipeline                      # in-process store
//	go run ./examples/imagepipeline -redis redis://localhost:6379/0
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/engine/memstore"
	"github.com/weirflow/weir/redisstore"
	"github.com/weirflow/weir/worker"
)

// Image is a stand-in for pixels: what each step produces.
type Image struct {
	Key    string `json:"key"`
	Width  int    `json:"width"`
	Height int    `json:"height"`
	Marks  []string
}

// Manifest is what publishing returns.
type Manifest struct {
	Source     string
	Renditions []string
}

// The queues, shared by the producer and the workers.
var (
	Fetch     = client.NewQueue[string, Image]("img.fetch")
	Resize    = client.NewQueue[int, Image]("img.resize")
	Watermark = client.NewQueue[string, Image]("img.watermark")
	Publish   = client.NewQueue[string, Manifest]("img.publish")
)

func main() {
	url := flag.String("redis", "", "Redis URL (redis://host:port/db); empty runs on the in-process store")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	store, err := openStore(*url)
	if err == nil {
		err = run(ctx, store, os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "imagepipeline:", err)
		os.Exit(1)
	}
}

func openStore(url string) (client.Store, error) {
	if url == "" {
		return memstore.New(), nil
	}
	opt, err := redis.ParseURL(url)
	if err != nil {
		return nil, err
	}
	return redisstore.New(redis.NewClient(opt), redisstore.Options{})
}

// register installs the pipeline's handlers on w.
func register(w *worker.Worker) {
	worker.Handle(w, Fetch, func(ctx context.Context, j *worker.Job[string]) (Image, error) {
		return Image{Key: j.Payload, Width: 4000, Height: 3000}, nil
	})
	worker.Handle(w, Resize, func(ctx context.Context, j *worker.Job[int]) (Image, error) {
		src, err := worker.DepResult[Image](j, "fetch")
		if err != nil {
			return Image{}, err
		}
		w := j.Payload
		return Image{Key: fmt.Sprintf("%s@%dw", strings.TrimSuffix(src.Key, ".jpg"), w), Width: w, Height: src.Height * w / src.Width}, nil
	})
	worker.Handle(w, Watermark, func(ctx context.Context, j *worker.Job[string]) (Image, error) {
		img, err := worker.DepResult[Image](j, "large")
		if err != nil {
			return Image{}, err
		}
		img.Key += "+wm"
		img.Marks = append(img.Marks, j.Payload)
		return img, nil
	})
	worker.Handle(w, Publish, func(ctx context.Context, j *worker.Job[string]) (Manifest, error) {
		m := Manifest{Source: j.Payload}
		for _, d := range j.Deps {
			img, err := worker.DepResult[Image](j, d.Task)
			if err != nil {
				return Manifest{}, err
			}
			m.Renditions = append(m.Renditions, fmt.Sprintf("%s (%dx%d)", img.Key, img.Width, img.Height))
		}
		slices.Sort(m.Renditions)
		return m, nil
	})
}

// run builds the pipeline for one image, runs it on two workers (as two
// processes would) and prints the result.
func run(ctx context.Context, store client.Store, out io.Writer) error {
	for range 2 {
		w := worker.New(store, worker.Config{Concurrency: 4})
		register(w)
		if err := w.Start(ctx); err != nil {
			return err
		}
		defer w.Stop(context.WithoutCancel(ctx))
	}

	wf := client.NewWorkflow()
	fetch := client.AddTask(wf, "fetch", Fetch, "photo-42.jpg")
	small := client.AddTask(wf, "small", Resize, 320).After(fetch)
	medium := client.AddTask(wf, "medium", Resize, 1024).After(fetch)
	large := client.AddTask(wf, "large", Resize, 2048).After(fetch)
	marked := client.AddTask(wf, "watermark", Watermark, "© weir").After(large)
	publish := client.AddTask(wf, "publish", Publish, "photo-42.jpg", client.MaxAttempts(3)).After(small, medium, marked)

	c := client.New(store)
	if err := c.Submit(ctx, wf); err != nil {
		return err
	}
	s, err := wf.Wait(ctx)
	if err != nil {
		return err
	}
	m, err := client.ResultOf(s, publish)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "workflow %s\n", s.State)
	for _, t := range s.Tasks {
		fmt.Fprintf(out, "  %-9s %s after %v\n", t.Name, t.State, t.After)
	}
	fmt.Fprintf(out, "published %s:\n", m.Source)
	for _, r := range m.Renditions {
		fmt.Fprintf(out, "  %s\n", r)
	}
	if len(m.Renditions) != 3 {
		return errors.New("expected 3 renditions")
	}
	return nil
}
