package dashboard_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserNameSearch drives, on a real `weir dev`, the search by name
// and label: the list shows each workflow's name and labels, the search
// box asks the API for a name prefix and every label (?name=&label=), a
// label links to the list of the workflows that carry it, the ID box
// asks the API for an ID prefix (?id_prefix=), and a workflow's page shows
// its name and labels.
func TestBrowserNameSearch(t *testing.T) {
	d := startDev(t)
	b := newBrowser(t, 1280, 900)
	submit(t, d.url, "application/json", `{"id":"wf-a","name":"nightly-report","labels":{"team":"data","env":"prod"},"tasks":[{"name":"a","queue":"hold","run":"true"}]}`)
	submit(t, d.url, "application/json", `{"id":"wf-b","name":"nightly-backup","labels":{"team":"ops"},"tasks":[{"name":"a","queue":"hold","run":"true"}]}`)
	submit(t, d.url, "application/json", `{"id":"wf-c","tasks":[{"name":"a","queue":"hold","run":"true"}]}`)
	rows := func() string {
		return strings.Join(evaluate[[]string](t, b, `[...document.querySelectorAll('#workflow-table tr[data-workflow]')].map(r => r.dataset.workflow)`), " ")
	}
	b.run(t, chromedp.Navigate(d.url+"/#token="+testToken), wait(`#workflow-table tr[data-workflow="wf-c"]`))
	if name := evaluate[string](t, b, `document.querySelector('#workflow-table tr[data-workflow="wf-a"] td.wf-name').textContent`); name != "nightly-reportenv=prodteam=data" {
		t.Errorf("wf-a's name cell reads %q, want its name and labels", name)
	}
	b.run(t, setValue(`#name-search`, "nightly team=data"), click(`#name-search-form button`),
		wait(`#workflow-table:not(:has(tr[data-workflow="wf-c"]))`))
	if got, hash := rows(), evaluate[string](t, b, `location.hash`); got != "wf-a" || hash != "#/?name=nightly&label=team%3Ddata" {
		t.Errorf("searching nightly team=data shows %q at %s, want wf-a at #/?name=nightly&label=team%%3Ddata", got, hash)
	}
	b.run(t, chromedp.Navigate(d.url+"/#/?name=nightly"), wait(`#workflow-table tr[data-workflow="wf-b"]`))
	if got := rows(); got != "wf-b wf-a" && got != "wf-a wf-b" {
		t.Errorf("?name=nightly shows %q, want wf-a and wf-b", got)
	}
	b.run(t, click(`tr[data-workflow="wf-b"] a.label`), wait(`#workflow-table:not(:has(tr[data-workflow="wf-a"]))`))
	if got := rows(); got != "wf-b" {
		t.Errorf("the label team=ops links to a list of %q, want wf-b", got)
	}
	// the ID box lists, through the API (?id_prefix=), the IDs that start
	// with what it holds, with the name search; the address keeps it
	b.run(t, chromedp.Navigate(d.url+"/#/?name=nightly"), wait(`#workflow-table tr[data-workflow="wf-b"]`),
		setValue(`#search`, "wf-b"), wait(`#workflow-table:not(:has(tr[data-workflow="wf-a"]))`))
	if got, hash := rows(), evaluate[string](t, b, `location.hash`); got != "wf-b" || hash != "#/?name=nightly&id_prefix=wf-b" {
		t.Errorf("the ID box's wf-b shows %q at %s, want wf-b at #/?name=nightly&id_prefix=wf-b", got, hash)
	}
	// in ID order (newest first would be wf-c wf-b wf-a)
	b.run(t, chromedp.Navigate(d.url+"/#/"), wait(`#workflow-table tr[data-workflow="wf-c"]`),
		setValue(`#search`, "wf-"), wait(`#workflow-table tr[data-workflow="wf-a"]:first-child`))
	if got := rows(); got != "wf-a wf-b wf-c" {
		t.Errorf("the ID box's wf- shows %q, want wf-a wf-b wf-c (ID order)", got)
	}
	b.run(t, chromedp.Navigate(d.url+"/#/?id_prefix=wf-c"), wait(`#workflow-table tr[data-workflow="wf-c"]`))
	if got, box := rows(), evaluate[string](t, b, `document.getElementById('search').value`); got != "wf-c" || box != "wf-c" {
		t.Errorf("#/?id_prefix=wf-c shows %q with %q in the ID box, want wf-c", got, box)
	}
	b.run(t, setValue(`#search`, "wf/"), wait(`#workflows p.muted`))
	b.run(t, chromedp.Navigate(d.url+"/#/workflows/wf-a"), wait(`#workflow-labels`))
	if got := evaluate[string](t, b, `document.querySelector('#workflow-name').textContent + ' ' + document.querySelector('#workflow-labels').textContent`); got != "namenightly-report labelsenv=prodteam=data" {
		t.Errorf("wf-a's page shows %q", got)
	}
}
