package watch

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/reportd/reportd/internal/report"
)

// projects maps a file to the project it is published in: --project (an id
// or a name), or with --project-from-dir the project named like the file's
// first-level folder under its root. Names are looked up once and cached.
type projects struct {
	svc    report.Service
	opts   *options
	mu     sync.Mutex
	byName map[string]int64
}

func (p *projects) forFile(ctx context.Context, path string) (int64, error) {
	if p.opts.projectFromDir {
		root := p.opts.rootOf(path)
		rel, _ := relTo(root, path)
		if dir, _, ok := strings.Cut(rel, "/"); ok {
			return p.byNameOrCreate(ctx, dir)
		}
		if p.opts.project == "" {
			return 0, report.Errorf(report.Validation, "%s is not in a project folder (and no --project was given)", rel)
		}
	}
	if id, err := strconv.ParseInt(p.opts.project, 10, 64); err == nil {
		return id, nil
	}
	return p.byNameOrCreate(ctx, p.opts.project)
}

func (p *projects) byNameOrCreate(ctx context.Context, name string) (int64, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if id, ok := p.byName[name]; ok {
		return id, nil
	}
	list, err := p.svc.ListProjects(ctx)
	if err != nil {
		return 0, err
	}
	if p.byName == nil {
		p.byName = map[string]int64{}
	}
	for _, pr := range list {
		if _, dup := p.byName[pr.Name]; !dup { // the oldest project of a name wins
			p.byName[pr.Name] = pr.ID
		}
	}
	if id, ok := p.byName[name]; ok {
		return id, nil
	}
	for _, pr := range list { // a slug, as stable links show it (acme-api for acme/api)
		if pr.Slug == name {
			p.byName[name] = pr.ID
			return pr.ID, nil
		}
	}
	if !p.opts.createProject {
		return 0, report.Errorf(report.NotFound, "no project named %q (use --create-project to create it)", name)
	}
	pr, err := p.svc.CreateProject(ctx, report.ProjectCreate{Name: name})
	if err != nil {
		return 0, fmt.Errorf("creating project %q: %w", name, err)
	}
	p.byName[name] = pr.ID
	return pr.ID, nil
}
