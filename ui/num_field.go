package main

// NumField is one numeric control: a label, a text input, a unit and the
// CLI's error message for it.
type NumField struct {
	App         *App
	Field       string
	Label       string
	Unit        string
	Placeholder string
	Disabled    bool
}

func (c *NumField) class() string {
	if c.App.FieldErr[c.Field] != "" {
		return "field bad"
	}
	return "field"
}
