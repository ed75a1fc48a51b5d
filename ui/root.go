package main

// Root is the page: header, config panel and results.
type Root struct {
	App *App
}

func (c *Root) class() string {
	if c.App.Running {
		return "running"
	}
	return ""
}

func (c *Root) tabClass(v string) string {
	if c.App.View == v {
		return "tab on"
	}
	return "tab"
}
